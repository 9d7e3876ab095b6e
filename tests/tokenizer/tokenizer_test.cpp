// Tokenizer behaviour beyond the HF corpus: errors with offsets, merge encodings, added-token flags,
// streaming decode, thread safety, malformed tokenizer.json.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "tokenizer/regex_splitter.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace ds {
namespace {

// A tiny byte-level BPE: bytes 'a'..'c', ' ' (Ġ), merges a b -> ab, ab c -> abc.
nlohmann::json tiny_spec() {
  return nlohmann::json::parse(R"({
    "added_tokens": [{"id": 10, "content": "<x>", "special": true, "normalized": false},
                     {"id": 11, "content": "<y>", "special": false, "normalized": false, "lstrip": true, "rstrip": true}],
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "\\s+|\\S+"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]},
    "post_processor": null,
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "dropout": null, "unk_token": null, "byte_fallback": false,
              "vocab": {"a": 0, "b": 1, "c": 2, "Ġ": 3, "ab": 4, "abc": 5},
              "merges": ["a b", ["ab", "c"]]}})");
}

Tokenizer tiny() {
  auto tokenizer = Tokenizer::from_json(tiny_spec().dump(), "tiny", TokenizerPipeline::as_written);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  return std::move(*tokenizer);
}

TEST(Tokenizer, BothMergeEncodingsAndAddedTokenFlags) {
  const Tokenizer tokenizer = tiny();
  EXPECT_EQ(*tokenizer.encode("abc ab<x>cab"), (std::vector<int32_t>{5, 3, 4, 10, 2, 4}));
  // <y> has lstrip/rstrip: the spaces around it belong to it.
  EXPECT_EQ(*tokenizer.encode("ab  <y>  c"), (std::vector<int32_t>{4, 11, 2}));
  EXPECT_EQ(tokenizer.decode(std::vector<int32_t>{5, 3, 10, 11}), "abc <x><y>");
  EXPECT_EQ(tokenizer.decode(std::vector<int32_t>{5, 10, 99}, true), "abc");
}

TEST(Tokenizer, InvalidUtf8IsAnErrorWithTheOffset) {
  const Tokenizer tokenizer = tiny();
  auto result = tokenizer.encode(std::string("ab\xC3\x28", 4));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("byte offset 2"), std::string::npos) << result.status().message();
  for (const std::string& bad : {std::string("\xED\xA0\x80"), std::string("\xF4\x90\x80\x80"), std::string("\xC0\xAF"),
                                std::string("a\xE2\x82")})
    EXPECT_FALSE(tokenizer.encode(bad).ok());
}

TEST(Tokenizer, LossyUtf8MatchesRust) {
  EXPECT_EQ(utf8::lossy("a\xE2\x82"), "a\xEF\xBF\xBD");
  EXPECT_EQ(utf8::lossy("\xF0\x9F\x98"), "\xEF\xBF\xBD");
  EXPECT_EQ(utf8::lossy("\xE2\x28\xA1"), "\xEF\xBF\xBD(\xEF\xBF\xBD");
  EXPECT_EQ(utf8::lossy("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Tokenizer, StreamingNeverEmitsBrokenUtf8) {
  nlohmann::json spec = tiny_spec();
  // Byte tokens for the three bytes of "€" (E2 82 AC -> â, Ĥ, ¬ in the byte map).
  spec["model"]["vocab"]["â"] = 6;
  spec["model"]["vocab"]["Ĥ"] = 7;
  spec["model"]["vocab"]["¬"] = 8;
  auto tokenizer = Tokenizer::from_json(spec.dump(), "tiny", TokenizerPipeline::as_written);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  EXPECT_EQ(*tokenizer->encode("€"), (std::vector<int32_t>{6, 7, 8}));
  StreamDecoder stream(*tokenizer);
  EXPECT_EQ(stream.push(0), "a");
  EXPECT_EQ(stream.push(6), "");
  EXPECT_EQ(stream.push(7), "");
  EXPECT_EQ(stream.push(8), "€");
  EXPECT_EQ(stream.push(6), "");
  EXPECT_EQ(stream.push(0), "\xEF\xBF\xBD" "a");  // the open sequence was broken by 'a'
  EXPECT_EQ(stream.push(6), "");
  EXPECT_EQ(stream.finish(), "\xEF\xBF\xBD");
}

TEST(Tokenizer, ThreadSafeEncode) {
  const Tokenizer tokenizer = tiny();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        const std::string text = std::string(static_cast<size_t>(i % 7), 'a') + "bc abc" + std::to_string(i % 3);
        auto ids = tokenizer.encode(text);
        if (!ids.ok() || tokenizer.decode(*ids) != text.substr(0, text.size() - 1)) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Tokenizer, MalformedTokenizerJsonIsAClearError) {
  auto expect_error = [](const nlohmann::json& spec, const std::string& needle) {
    auto result = Tokenizer::from_json(spec.dump(), "tokenizer.json", TokenizerPipeline::as_written);
    ASSERT_FALSE(result.ok()) << "expected an error mentioning " << needle;
    EXPECT_NE(result.status().message().find(needle), std::string::npos) << result.status().message();
  };
  auto spec = tiny_spec();
  spec["model"]["merges"][0] = "a b c";
  expect_error(spec, "merges[0]");
  spec = tiny_spec();
  spec["model"]["merges"].push_back("a z");
  expect_error(spec, "vocabulary");
  spec = tiny_spec();
  spec["model"]["byte_fallback"] = true;
  expect_error(spec, "byte_fallback");
  spec = tiny_spec();
  spec["normalizer"] = {{"type", "Lowercase"}};
  expect_error(spec, "Lowercase");
  spec = tiny_spec();
  spec["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(";
  expect_error(spec, "regex");
  spec = tiny_spec();
  spec["model"]["vocab"]["a"] = "x";
  expect_error(spec, "vocab[\"a\"]");
  spec = tiny_spec();
  spec.erase("decoder");
  expect_error(spec, "decoder");
  EXPECT_FALSE(Tokenizer::from_json("{", "tokenizer.json", TokenizerPipeline::as_written).ok());
  EXPECT_FALSE(Tokenizer::from_json("[]", "tokenizer.json", TokenizerPipeline::as_written).ok());
}

// model.vocab and model.merges are read as a stream, not as a tree: each wrong entry is still named.
TEST(Tokenizer, MalformedVocabularyAndMergesAreClearErrors) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    auto result = Tokenizer::from_json(text, "tokenizer.json", TokenizerPipeline::as_written);
    ASSERT_FALSE(result.ok()) << "expected an error mentioning " << needle;
    EXPECT_NE(result.status().message().find(needle), std::string::npos) << result.status().message();
  };
  auto with_model = [](const char* key, const nlohmann::json& value) {
    auto spec = tiny_spec();
    spec["model"][key] = value;
    return spec.dump();
  };
  expect_error(with_model("vocab", nlohmann::json::array({1, 2})), "model.vocab: expected an object {token: id}, found array");
  expect_error(with_model("vocab", {{"a", 1 << 24}}), "model.vocab[\"a\"]: expected an id in [0, 2^24), found 16777216");
  expect_error(with_model("vocab", {{"a", -1}}), "found -1");
  expect_error(with_model("vocab", {{"a", uint64_t{5000000000}}}), "found 5000000000");
  expect_error(with_model("vocab", {{"a", 1.5}}), "vocab[\"a\"]: expected an id in [0, 2^24), found 1.5");
  expect_error(with_model("vocab", {{"a", {{"id", 1}}}}), "vocab[\"a\"]: expected an id in [0, 2^24), found an object");
  expect_error(with_model("vocab", {{"a", nullptr}}), "found null");
  expect_error(with_model("merges", "a b"), "model.merges: expected an array, found string");
  expect_error(with_model("merges", nlohmann::json::array({"a b", 7})), "merges[1]: expected a string \"a b\" or a pair [a, b], found 7");
  expect_error(with_model("merges", nlohmann::json::array({nlohmann::json::array({"a", "b", "c"})})),
               "merges[0]: expected a string \"a b\" or a pair [a, b], found a pair holding more than 2 strings");
  expect_error(with_model("merges", nlohmann::json::array({nlohmann::json::array({"a"})})), "found a pair holding 1 string");
  expect_error(with_model("merges", nlohmann::json::array({nlohmann::json::array({"a", 1})})), "found a pair holding 1");
  expect_error(with_model("merges", nlohmann::json::array({nlohmann::json::array()})), "found a pair holding no string");
  auto spec = tiny_spec();
  spec["model"].erase("merges");
  expect_error(spec.dump(), "model.merges: expected an array, found nothing");
  // nlohmann keeps the last of two equal keys; the stream sees both, and a tokenizer must not guess.
  std::string twice = tiny_spec().dump();
  const std::string first = "\"a\":0,";
  ASSERT_NE(twice.find(first), std::string::npos);
  twice.replace(twice.find(first), first.size(), "\"a\":0,\"a\":6,");
  expect_error(twice, "model.vocab: expected each token once, found \"a\" twice");
  // Tables anywhere but at model.vocab / model.merges are ordinary JSON, not streamed.
  spec = tiny_spec();
  spec["extra"] = {{"vocab", {{"x", "not an id"}}}, {"merges", {1, 2}}};
  spec["model"]["extra"] = {{"vocab", {{"x", "y"}}}};
  EXPECT_TRUE(Tokenizer::from_json(spec.dump(), "tokenizer.json", TokenizerPipeline::as_written).ok());
}

TEST(Tokenizer, OnigWhiteSpaceTranslation) {
  auto splitter = RegexSplitter::compile(R"(\s+|\S+)");
  ASSERT_TRUE(splitter.ok());
  std::vector<std::string_view> pieces;
  splitter->split("a\u180e b", pieces);  // U+180E is not White_Space for Oniguruma
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0], "a\u180e");
}

}  // namespace
}  // namespace ds
