// Random checkpoints that write visible text (model/visible_text.h): which ids count as producible,
// and the elements the scheme sets in each kind of tensor, tied and untied.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "model/visible_text.h"

namespace ds {
namespace {

const char* kTokenizer = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "<|im_end|>": 3, "</think>": 4}},
  "added_tokens": [{"id": 3, "content": "<|im_end|>", "special": true}, {"id": 4, "content": "</think>", "special": false}]})";

TEST(VisibleText, ProducibleIdsAreTheVocabularyLessSpecialTokens) {
  const auto produced = producible_ids(kTokenizer, 6);
  ASSERT_TRUE(produced.has_value());
  EXPECT_EQ(*produced, (std::vector<bool>{true, true, false, false, true, false}));
  EXPECT_FALSE(producible_ids("{}", 6).has_value()) << "no vocabulary: nothing to edit";
  EXPECT_FALSE(producible_ids("not json", 6).has_value());
}

std::vector<float> edited(const std::string& name, std::vector<int64_t> shape, bool tied) {
  std::vector<float> values(static_cast<size_t>(shape[0] * (shape.size() > 1 ? shape[1] : 1)), 0.5f);
  const std::vector<bool> produced{true, false, true};
  make_text_visible(name, shape, DType::F32, std::as_writable_bytes(std::span(values)), "model.", tied, produced);
  return values;
}

TEST(VisibleText, EachTensorGetsItsPartOfTheScheme) {
  const float h = 0.5f, a = kFeatureValue;  // h: untouched
  // A hidden size of 2 has one feature dimension. [vocab 3, hidden 2]: the head's feature column
  // scores id 1 down; an untied embedding keeps +a for all.
  EXPECT_EQ(edited("lm_head.weight", {3, 2}, false), (std::vector<float>{a, h, -a, h, a, h}));
  EXPECT_EQ(edited("model.embed_tokens.weight", {3, 2}, false), (std::vector<float>{a, h, a, h, a, h}));
  EXPECT_EQ(edited("model.embed_tokens.weight", {3, 2}, true), (std::vector<float>{a, h, -a, h, a, h}));
  EXPECT_EQ(edited("model.norm.weight", {3}, true), (std::vector<float>{kFinalScale - 1, h, h}));
  EXPECT_EQ(edited("model.layers.0.input_layernorm.weight", {3}, true), (std::vector<float>{-1, h, h}));
  EXPECT_EQ(edited("model.layers.5.post_attention_layernorm.weight", {3}, true), (std::vector<float>{-1, h, h}));
  for (const char* writer : {"model.layers.3.self_attn.o_proj.weight", "model.layers.1.linear_attn.out_proj.weight",
                             "model.layers.2.mlp.down_proj.weight"})  // [hidden 2, in 3]: row 0 zero
    EXPECT_EQ(edited(writer, {2, 3}, true), (std::vector<float>{0, 0, 0, h, h, h})) << writer;
  // Everything else, the DeltaNet's own norm and the MTP head's included, is left alone.
  for (const char* other : {"model.layers.1.linear_attn.norm.weight", "mtp.norm.weight", "model.layers.0.mlp.up_proj.weight",
                            "mtp.layers.0.input_layernorm.weight"})
    EXPECT_EQ(edited(other, {2, 3}, true), std::vector<float>(6, h)) << other;
}

TEST(VisibleText, TheFeatureIsAGroupOfDimensions) {
  EXPECT_EQ(visible_feature_dims(2), 1);
  EXPECT_EQ(visible_feature_dims(8), 2);
  EXPECT_EQ(visible_feature_dims(256), kFeatureDims);
  EXPECT_EQ(visible_feature_dims(5120), kFeatureDims);
  const float h = 0.5f, a = kFeatureValue;
  // Hidden 8: dimensions 0 and 1 in every tensor of the scheme.
  EXPECT_EQ(edited("lm_head.weight", {2, 8}, false), (std::vector<float>{a, a, h, h, h, h, h, h, -a, -a, h, h, h, h, h, h}));
  EXPECT_EQ(edited("model.norm.weight", {8}, true), (std::vector<float>{kFinalScale - 1, kFinalScale - 1, h, h, h, h, h, h}));
  EXPECT_EQ(edited("model.layers.0.input_layernorm.weight", {8}, true), (std::vector<float>{-1, -1, h, h, h, h, h, h}));
  std::vector<float> rows(8 * 2, h);  // [hidden 8, in 2]: rows 0 and 1 zero
  std::fill(rows.begin(), rows.begin() + 4, 0.0f);
  EXPECT_EQ(edited("model.layers.2.mlp.down_proj.weight", {8, 2}, true), rows);
}

}  // namespace
}  // namespace ds
