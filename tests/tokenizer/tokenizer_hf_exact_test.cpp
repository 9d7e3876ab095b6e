// Exactness against HF: ids of every corpus text and whole-sequence decodes, for the project's own
// vocabulary and the real Qwen3.5 one (fixtures from tools/reference/make_tokenizer_fixtures.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/tokenizer.h"

namespace ds::tokenizer_hf_exact_test {
namespace {

const std::string kFixtures = std::string(DS_FIXTURES_DIR) + "/tokenizer";

nlohmann::json load_json(const std::string& path) { return nlohmann::json::parse(test::read_file(path)); }

std::vector<std::string> corpus() {
  return load_json(kFixtures + "/corpus.json")["texts"].get<std::vector<std::string>>();
}

// Encodes the whole corpus and compares with HF; reports the first few mismatches with their text.
void expect_corpus_ids(const Tokenizer& tokenizer, const nlohmann::json& expected_ids, const std::vector<std::string>& texts) {
  ASSERT_GE(texts.size(), expected_ids.size());
  int mismatches = 0;
  for (size_t i = 0; i < expected_ids.size(); ++i) {
    auto ids = tokenizer.encode(texts[i]);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    const auto expected = expected_ids[i].get<std::vector<int32_t>>();
    if (*ids != expected && ++mismatches <= 5) {
      ADD_FAILURE() << "text " << i << " " << nlohmann::json(texts[i]).dump() << "\n  expected " << nlohmann::json(expected).dump()
                    << "\n  found    " << nlohmann::json(*ids).dump();
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << expected_ids.size() << " texts";
}

void expect_decodes(const Tokenizer& tokenizer, const nlohmann::json& cases) {
  for (const auto& c : cases) {
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer.decode(ids), c["text"].get<std::string>()) << c["ids"].dump();
    EXPECT_EQ(tokenizer.decode(ids, true), c["text_skip_special"].get<std::string>()) << c["ids"].dump();
    StreamDecoder stream(tokenizer);
    std::string streamed;
    for (const int32_t id : ids) streamed += stream.push(id);
    streamed += stream.finish();
    EXPECT_EQ(streamed, c["text"].get<std::string>()) << c["ids"].dump();
  }
}

TEST(TokenizerHfExact, ProjectVocabularyCorpus) {
  const auto fixture = load_json(kFixtures + "/ids_project.json");
  auto tokenizer = Tokenizer::load_dir(std::string(DS_REPO_DIR) + "/data/tokenizer");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  const auto texts = corpus();
  ASSERT_GE(texts.size(), 2000u);
  expect_corpus_ids(*tokenizer, fixture["ids"], texts);
  expect_decodes(*tokenizer, fixture["decode"]);
}

TEST(TokenizerHfExact, RealQwen35VocabularyCorpus) {
  const std::string dir = DS_REAL_TOKENIZER_DIR;
  if (!std::filesystem::exists(dir + "/tokenizer.json"))
    GTEST_SKIP() << dir << " is missing: run scripts/real_tokenizer.sh (scripts/install_deps.sh --test does)";
  const auto fixture = load_json(kFixtures + "/ids_real.json");
  auto tokenizer = Tokenizer::load_dir(dir);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  EXPECT_EQ(tokenizer->pipeline(), TokenizerPipeline::qwen35);
  // Spec §7.1 HF test vector (Qwen/Qwen3.5-9B tokenizer).
  const std::string text =
      "This is a test 😊\nI was born in 92000, and this is falsé.\n生活的真谛是\nHi  Hello\nHi   Hello\n\n \n  \n Hello\n<s>\n"
      "hi<s>there\nThe following string should be properly encoded: Hello.\nBut ird and ปี   ird   ด\nHey how are you doing";
  const std::vector<int32_t> vector_ids = {
      1919, 369, 264, 1228, 25677, 232, 198, 40, 557, 8950, 303, 220, 24, 17, 15, 15, 15, 11, 321, 411, 369, 30882, 933, 13,
      198, 103815, 132339, 95761, 198, 12675, 220, 21251, 198, 12675, 256, 21251, 271, 46813, 21251, 198, 42589, 29, 198, 5834,
      42589, 29, 17977, 198, 760, 2614, 886, 1220, 381, 9971, 19873, 25, 21251, 13, 198, 3850, 220, 2517, 321, 170827, 256, 220,
      2517, 256, 149027, 198, 18103, 1204, 513, 488, 3604};
  auto ids = tokenizer->encode(text);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, vector_ids);
  EXPECT_EQ(tokenizer->decode(*ids), text);
  EXPECT_EQ(tokenizer->token_to_id("<|im_end|>"), 248046);
  EXPECT_TRUE(tokenizer->is_special(248046));
  EXPECT_FALSE(tokenizer->is_special(248068));  // <think> is not special
  expect_corpus_ids(*tokenizer, fixture["ids"], corpus());
  expect_decodes(*tokenizer, fixture["decode"]);
}

// A Qwen2-style tokenizer.json (old regex, no normalizer): as written without config.json, and the
// Qwen3.5 pipeline when model_type is qwen3_5, as transformers 5.24.0 AutoTokenizer does.
TEST(TokenizerHfExact, Qwen35PipelineOverridesTokenizerJson) {
  const auto fixture = load_json(kFixtures + "/ids_override.json");
  auto spec = load_json(std::string(DS_REPO_DIR) + "/data/tokenizer/tokenizer.json");
  spec["normalizer"] = nullptr;
  spec["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  test::TempDir dir;
  test::write_file(dir / "tokenizer.json", spec.dump());
  auto as_written = Tokenizer::load_dir(dir.path().string());
  ASSERT_TRUE(as_written.ok()) << as_written.status().message();
  EXPECT_EQ(as_written->pipeline(), TokenizerPipeline::as_written);
  const auto texts = corpus();
  expect_corpus_ids(*as_written, fixture["as_written"], texts);
  test::write_file(dir / "config.json", R"({"model_type": "qwen3_5"})");
  auto qwen35 = Tokenizer::load_dir(dir.path().string());
  ASSERT_TRUE(qwen35.ok()) << qwen35.status().message();
  EXPECT_EQ(qwen35->pipeline(), TokenizerPipeline::qwen35);
  expect_corpus_ids(*qwen35, fixture["qwen35"], texts);
  EXPECT_GT(fixture["texts_that_differ"].get<int>(), 0);
}

}  // namespace
}  // namespace ds::tokenizer_hf_exact_test
