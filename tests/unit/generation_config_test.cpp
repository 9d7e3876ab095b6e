// generation_config.json: stop ids (int or list, merged with config.json's), sampling defaults,
// type and range errors that name the key. A GGUF file's general.sampling.* keys: as llama.cpp's
// converter code writes them (tests/fixtures/gguf/sampling.gguf, gguf-py's Metadata, and what gguf-py
// reads back from it), read back, written the same way, refused when out of range.
#include "io/generation_config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "test_util.h"
#include "util/mapped_file.h"

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

TEST(GenerationConfig, DefaultsARequestCouldNotAskForAreRefused) {
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"({"temperature": -0.5})", "generation_config.json"),
                        "generation_config.json: temperature: expected a number in [0, 1e+06], found -0.5");
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"({"top_p": 0})", "g"), "top_p: expected a number in (0, 1], found 0");
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"({"min_p": 1.5})", "g"), "min_p");
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"({"repetition_penalty": 0})", "g"), "repetition_penalty");
  EXPECT_ERROR_CONTAINS(parse_generation_config(R"({"top_k": -2})", "g"), "top_k");
  auto edges = parse_generation_config(R"({"temperature": 0, "top_p": 1, "top_k": -1, "min_p": 0, "repetition_penalty": 1})", "g");
  ASSERT_TRUE(edges.ok()) << edges.status().message();
  EXPECT_EQ(sampling_defaults_text(*edges), "temperature 0, top_k -1, top_p 1, min_p 0, repetition_penalty 1");
  EXPECT_EQ(sampling_defaults_text(GenerationConfig{}), "none");
}

// The fixture's values as gguf-py read them back: float32s, so compared exactly as floats.
TEST(GgufSamplingDefaults, ReadsWhatLlamaCppsConverterWrites) {
  const std::string dir = std::string(DS_FIXTURES_DIR) + "/gguf/";
  const auto expected = nlohmann::json::parse(test::read_file(dir + "sampling_expected.json"));
  auto g = load_generation_config(dir + "sampling.gguf");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(*g->top_k, expected["general.sampling.top_k"]["value"].get<int64_t>());
  EXPECT_EQ(*g->temperature, expected["general.sampling.temp"]["value"].get<double>());
  EXPECT_EQ(*g->top_p, expected["general.sampling.top_p"]["value"].get<double>());
  EXPECT_EQ(*g->min_p, expected["general.sampling.min_p"]["value"].get<double>());
  EXPECT_EQ(*g->repetition_penalty, expected["general.sampling.penalty_repeat"]["value"].get<double>());
  EXPECT_TRUE(g->eos_token_id.empty());
  EXPECT_EQ(sampling_defaults_text(*g), "temperature 0.7, top_k 20, top_p 0.8, min_p 0, repetition_penalty 1.05");

  // Written back from generation_config.json's values: the converter's keys, value types and values.
  auto json = parse_generation_config(R"({"temperature": 0.7, "top_k": 20, "top_p": 0.8, "min_p": 0.0, "repetition_penalty": 1.05})", "g");
  ASSERT_TRUE(json.ok()) << json.status().message();
  GgufMetadata metadata;
  set_gguf_generation_config(*json, metadata);
  auto header = gguf_header_bytes(metadata, {});
  ASSERT_TRUE(header.ok()) << header.status().message();
  auto ours = parse_gguf(std::as_bytes(std::span(*header)), "ours.gguf");
  ASSERT_TRUE(ours.ok()) << ours.status().message();
  ASSERT_EQ(ours->metadata.size(), expected.size());
  for (const GgufEntry& e : ours->metadata) {
    SCOPED_TRACE(std::string(e.key));
    ASSERT_TRUE(expected.contains(std::string(e.key)));
    const auto& want = expected[std::string(e.key)];
    EXPECT_EQ(gguf_type_name(e.type), want["type"].get<std::string>());
    EXPECT_EQ(*e.number(), want["value"].get<double>());
  }
}

TEST(GgufSamplingDefaults, AFileWithoutThemHasNone) {
  auto g = load_generation_config(std::string(DS_FIXTURES_DIR) + "/gguf/container.gguf");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(sampling_defaults_text(*g), "none");
}

// Each bad value in a file otherwise fine: a clear error naming the file and the key.
TEST(GgufSamplingDefaults, BadValuesNameTheFileAndTheKey) {
  auto read = [](const GgufMetadata& metadata) -> Result<GenerationConfig> {
    DS_ASSIGN_OR_RETURN(const std::string header, gguf_header_bytes(metadata, {}));
    DS_ASSIGN_OR_RETURN(const GgufFile gguf, parse_gguf(std::as_bytes(std::span(header)), "x.gguf"));
    return gguf_generation_config(gguf, "x.gguf");
  };
  GgufMetadata text;
  text.set_string("general.sampling.temp", "warm");
  EXPECT_ERROR_CONTAINS(read(text), "x.gguf: metadata general.sampling.temp: expected a number, found string");
  GgufMetadata not_a_number;
  not_a_number.set_number<float>("general.sampling.temp", std::numeric_limits<float>::quiet_NaN());
  EXPECT_ERROR_CONTAINS(read(not_a_number), "x.gguf (general.sampling.*): temperature: expected a number in [0, 1e+06], found nan");
  GgufMetadata fractional_k;
  fractional_k.set_number<float>("general.sampling.top_k", 20.5f);
  EXPECT_ERROR_CONTAINS(read(fractional_k), "metadata general.sampling.top_k: expected an integer, found float32");
  GgufMetadata huge_k;
  huge_k.set_number<int64_t>("general.sampling.top_k", int64_t{1} << 40);
  EXPECT_ERROR_CONTAINS(read(huge_k), "top_k: expected an integer in [-1, 1073741824], found 1099511627776");
  GgufMetadata zero_p;
  zero_p.set_number<float>("general.sampling.top_p", 0.0f);
  EXPECT_ERROR_CONTAINS(read(zero_p), "top_p: expected a number in (0, 1], found 0");
}

TEST(GenerationConfig, MissingFileIsEmpty) {
  test::TempDir dir;
  auto g = load_generation_config(dir.path().string());
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->eos_token_id.empty());
}

}  // namespace
}  // namespace ds
