// The tokenizer and chat template read from a GGUF file's metadata (tokenizer/gguf_tokenizer.h)
// against the HF tokenizer llama.cpp's converter made the file from (tests/fixtures/gguf/hf_tokenizer,
// written beside the fixtures by tools/reference/make_gguf_model_fixtures.py): the same ids for every
// text of the tokenizer corpus, the same decoding, the same special tokens and template.
#include "tokenizer/gguf_tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/gguf_set.h"
#include "io/gguf_writer.h"
#include "test_util.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace ds {
namespace {

namespace fs = std::filesystem;
const fs::path kGguf = fs::path(DS_FIXTURES_DIR) / "gguf";
const std::string kFile = (kGguf / "c_bf16_untied-Q8_0-00002-of-00003.gguf").string();  // any part of the set

std::vector<std::string> corpus() {
  std::ifstream in(fs::path(DS_FIXTURES_DIR) / "tokenizer" / "corpus.json");
  std::vector<std::string> texts = nlohmann::json::parse(in)["texts"].get<std::vector<std::string>>();
  // The chat tokens inside text, as a rendered conversation has them.
  texts.push_back("<|im_start|>user\nhello <think>x</think><|im_end|>\n<|im_start|>assistant\n<|endoftext|>");
  return texts;
}

TEST(GgufTokenizer, EncodesAndDecodesExactlyAsTheHfTokenizerItWasMadeFrom) {
  auto hf = Tokenizer::from_json(test::read_file((kGguf / "hf_tokenizer" / "tokenizer.json").string()), "tokenizer.json",
                                 TokenizerPipeline::qwen35);
  ASSERT_TRUE(hf.ok()) << hf.status().message();
  for (const std::string& file : {kFile, (kGguf / "c_bf16_untied-BF16.gguf").string()}) {
    auto gguf = Tokenizer::load_dir(file);
    ASSERT_TRUE(gguf.ok()) << gguf.status().message();
    EXPECT_EQ(gguf->pipeline(), TokenizerPipeline::qwen35);
    EXPECT_EQ(gguf->id_limit(), 505);  // 480 BPE tokens, 20 unused ids, 5 chat tokens
    int64_t ids = 0;
    for (const std::string& text : corpus()) {
      auto want = hf->encode(text);
      auto got = gguf->encode(text);
      ASSERT_TRUE(want.ok() && got.ok());
      ASSERT_EQ(*got, *want) << text;
      EXPECT_EQ(gguf->decode(*got), hf->decode(*want));
      EXPECT_EQ(gguf->decode(*got, true), hf->decode(*want, true));
      ids += static_cast<int64_t>(got->size());
    }
    EXPECT_GT(ids, 1000);
    for (int32_t id = 0; id < 505; ++id) {
      EXPECT_EQ(gguf->is_known(id), hf->is_known(id)) << id;
      EXPECT_EQ(gguf->is_special(id), hf->is_special(id)) << id;
      EXPECT_EQ(gguf->token_bytes(id), hf->token_bytes(id)) << id;
    }
  }
}

TEST(GgufTokenizer, ChatTemplateAndSpecialTokensAreTheHfOnes) {
  const auto config = nlohmann::json::parse(test::read_file((kGguf / "hf_tokenizer" / "tokenizer_config.json").string()));
  auto chat = load_chat_template(kFile);
  ASSERT_TRUE(chat.ok()) << chat.status().message();
  EXPECT_EQ(*chat, config["chat_template"].get<std::string>());
  auto special = load_special_tokens(kFile);
  ASSERT_TRUE(special.ok()) << special.status().message();
  EXPECT_EQ((*special)["eos_token"], config["eos_token"]);
  EXPECT_EQ((*special)["pad_token"], config["pad_token"]);
  EXPECT_FALSE(special->contains("bos_token"));  // null in tokenizer_config.json, absent in the GGUF
}

// The real Qwen3.5 / Qwen3.6 vocabulary (248,320 ids) through deltaserve's GGUF writer
// (set_gguf_tokenizer) and back: every id's bytes, known and special flags, the ids of every corpus
// text and their decoding are those of the HF tokenizer.json it was written from.
TEST(GgufTokenizer, RealQwen35VocabularyThroughAWrittenGgufIsTheHfTokenizer) {
  const std::string dir = DS_REAL_TOKENIZER_DIR;
  if (!fs::exists(dir + "/tokenizer.json"))
    GTEST_SKIP() << dir << " is missing: run scripts/real_tokenizer.sh (scripts/install_deps.sh --test does)";
  auto hf = Tokenizer::load_dir(dir);
  ASSERT_TRUE(hf.ok()) << hf.status().message();
  constexpr int64_t kVocab = 248320;  // the model's, padded past the tokenizer's 248,077 ids
  GgufMetadata metadata;
  metadata.set_string("general.architecture", "qwen35");
  const Status set = set_gguf_tokenizer(test::read_file(dir + "/tokenizer.json"), test::read_file(dir + "/tokenizer_config.json"),
                                        "{{ messages }}", kVocab, metadata);
  ASSERT_TRUE(set.ok()) << set.message();
  test::TempDir tmp;
  auto writer = GgufWriter::create(tmp / "vocab.gguf", metadata, {});
  ASSERT_TRUE(writer.ok() && writer->close().ok());
  auto gguf = Tokenizer::load_dir(tmp / "vocab.gguf");
  ASSERT_TRUE(gguf.ok()) << gguf.status().message();
  EXPECT_EQ(gguf->pipeline(), TokenizerPipeline::qwen35);
  EXPECT_EQ(gguf->id_limit(), hf->id_limit());
  for (int32_t id = 0; id < kVocab; ++id) {
    ASSERT_EQ(gguf->is_known(id), hf->is_known(id)) << id;
    ASSERT_EQ(gguf->is_special(id), hf->is_special(id)) << id;
    ASSERT_EQ(gguf->token_bytes(id), hf->token_bytes(id)) << id;
  }
  for (const std::string& text : corpus()) {
    auto want = hf->encode(text);
    auto got = gguf->encode(text);
    ASSERT_TRUE(want.ok() && got.ok());
    ASSERT_EQ(*got, *want) << text;
    EXPECT_EQ(gguf->decode(*got, true), hf->decode(*want, true));
  }
  auto special = load_special_tokens(tmp / "vocab.gguf");
  ASSERT_TRUE(special.ok());
  EXPECT_EQ((*special)["eos_token"], "<|im_end|>");
  EXPECT_EQ((*special)["pad_token"], "<|endoftext|>");
}

TEST(GgufTokenizer, OtherPreTokenizersAreRefusedByName) {
  test::TempDir tmp;
  std::string bytes = test::read_file((kGguf / "c_bf16_untied-BF16.gguf").string());
  const size_t at = bytes.find("qwen35", bytes.find("tokenizer.ggml.pre"));
  bytes.replace(at, 6, "llama3");
  test::write_file(tmp / "m.gguf", bytes);
  EXPECT_ERROR_CONTAINS(Tokenizer::load_dir(tmp / "m.gguf"),
                        "m.gguf: tokenizer.ggml.pre \"llama3\" is not supported (expected \"qwen35\", the Qwen3.5 pre-tokenizer)");
}

// A token that is not UTF-8 (found by fuzz_gguf_model: it reached the JSON writer, which threw) is
// refused by index, before anything is built from it.
TEST(GgufTokenizer, TokensThatAreNotUtf8AreRefused) {
  test::TempDir tmp;
  std::string bytes = test::read_file((kGguf / "c_bf16_untied-BF16.gguf").string());
  const size_t at = bytes.find("<|im_end|>", bytes.find("tokenizer.ggml.tokens"));
  ASSERT_NE(at, std::string::npos);
  bytes[at] = static_cast<char>(0xa0);  // a continuation byte with nothing to continue
  test::write_file(tmp / "m.gguf", bytes);
  EXPECT_ERROR_CONTAINS(Tokenizer::load_dir(tmp / "m.gguf"),
                        "] is not valid UTF-8 (byte 0 of 10): expected the UTF-8 text of a byte-level BPE symbol");
}

}  // namespace
}  // namespace ds
