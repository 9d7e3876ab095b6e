// Random checkpoints that write visible text (model/visible_text.h): which ids count as producible,
// and the elements the scheme sets in each kind of tensor, tied and untied.
#include <gtest/gtest.h>

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
  const float h = 0.5f;  // untouched
  // [vocab 3, hidden 2]: column 0 of the head scores id 1 down; an untied embedding keeps +1 for all.
  EXPECT_EQ(edited("lm_head.weight", {3, 2}, false), (std::vector<float>{1, h, -1, h, 1, h}));
  EXPECT_EQ(edited("model.embed_tokens.weight", {3, 2}, false), (std::vector<float>{1, h, 1, h, 1, h}));
  EXPECT_EQ(edited("model.embed_tokens.weight", {3, 2}, true), (std::vector<float>{1, h, -1, h, 1, h}));
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

}  // namespace
}  // namespace ds
