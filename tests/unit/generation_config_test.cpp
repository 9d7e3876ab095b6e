// generation_config.json: stop ids (int or list, merged with config.json's), sampling defaults,
// type errors that name the key.
#include "io/generation_config.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace ds {
namespace {

TEST(GenerationConfig, ReadsStopIdsAndDefaults) {
  auto g = parse_generation_config(R"({"eos_token_id": [248046, 248044], "temperature": 0.6, "top_k": 20, "top_p": 0.95})",
                                   "generation_config.json");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->eos_token_id, (std::vector<int64_t>{248046, 248044}));
  EXPECT_DOUBLE_EQ(*g->temperature, 0.6);
  EXPECT_EQ(*g->top_k, 20);
  EXPECT_FALSE(g->min_p.has_value());
  TextConfig text;
  text.eos_token_id = {248044};
  EXPECT_EQ(stop_token_ids(text, *g), (std::vector<int32_t>{248044, 248046}));
}

TEST(GenerationConfig, SingleIdAndNulls) {
  auto g = parse_generation_config(R"({"eos_token_id": 7, "temperature": null})", "g");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->eos_token_id, (std::vector<int64_t>{7}));
  EXPECT_FALSE(g->temperature.has_value());
}

TEST(GenerationConfig, ErrorsNameTheKey) {
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"({"temperature": "hot"})", "generation_config.json"), "temperature");
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"({"eos_token_id": [-3]})", "generation_config.json"), "eos_token_id[0]");
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"([1, 2])", "generation_config.json"), "expected a JSON object");
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"({"top_k": 1.5})", "generation_config.json"), "top_k");
}

TEST(GenerationConfig, MissingFileIsEmpty) {
  test::TempDir dir;
  auto g = load_generation_config(dir.path().string());
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->eos_token_id.empty());
}

}  // namespace
}  // namespace ds
