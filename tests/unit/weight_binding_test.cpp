// Binding by the weight table: both save layouts, tied and untied heads, the MTP head or its absence,
// skipped vision, and one named error per kind of mismatch (missing, wrong shape, wrong dtype, unexpected).
#include "model/qwen35_weights.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "io/model_config.h"
#include "io/safetensors_checkpoint.h"
#include "micro_checkpoint.h"
#include "model/weight_spec.h"
#include "test_util.h"

namespace ds {
namespace {

using test::EditableTensor;

struct Bound {
  Result<Qwen35Weights> weights;
  BindReport report;
};

Bound bind_dir(const std::string& dir) {
  auto config = load_model_config(dir);
  EXPECT_TRUE(config.ok()) << config.status().message();
  auto checkpoint = SafetensorsCheckpoint::open_dir(dir);
  EXPECT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  BindReport report;
  auto weights = bind_qwen35_weights(*checkpoint, *config, &report);
  return {std::move(weights), report};
}

class WeightBinding : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  std::string released_ = tmp_ / "released";
  void SetUp() override { test::write_micro_checkpoint(released_, {}); }
  std::string rewritten(const std::function<void(std::vector<EditableTensor>&)>& edit) {
    const std::string dst = tmp_ / "rewritten";
    test::rewrite_checkpoint(released_, dst, edit);
    return dst;
  }
};

TEST_F(WeightBinding, BindsReleasedLayoutAndSkipsVisionExplicitly) {
  const Bound bound = bind_dir(released_);
  ASSERT_TRUE(bound.weights.ok()) << bound.weights.status().message();
  const Qwen35Weights& w = *bound.weights;
  EXPECT_EQ(bound.report.text_prefix, kNestedTextPrefix);
  ASSERT_EQ(w.layers.size(), 4u);
  EXPECT_EQ(w.layers[3].type, LayerType::full_attention);
  EXPECT_EQ(w.layers[0].type, LayerType::linear_attention);
  EXPECT_EQ(w.layers[3].attention.q_proj.shape, (std::vector<int64_t>{4 * 2 * 32, 64}));
  EXPECT_EQ(w.layers[0].deltanet.in_proj_qkv.shape, (std::vector<int64_t>{2 * 2 * 16 + 4 * 16, 64}));
  EXPECT_EQ(w.layers[0].deltanet.A_log.dtype, DType::F32);
  EXPECT_EQ(w.layers[0].deltanet.norm.dtype, DType::F32);
  EXPECT_EQ(w.layers[0].deltanet.conv1d.dtype, DType::BF16);
  EXPECT_TRUE(w.tied);
  EXPECT_EQ(w.lm_head.data, w.embed_tokens.data);
  // 3 + 12 per block (depth 1) + 6 merger tensors.
  EXPECT_EQ(bound.report.skipped_vision.size(), 21u);
  EXPECT_TRUE(bound.report.ignored.empty());
}

TEST_F(WeightBinding, BindsTextOnlyLayoutWithUntiedHead) {
  const std::string dir = tmp_ / "flat";
  test::write_micro_checkpoint(dir, {.nested = false, .tied = false});
  const Bound bound = bind_dir(dir);
  ASSERT_TRUE(bound.weights.ok()) << bound.weights.status().message();
  EXPECT_EQ(bound.report.text_prefix, kFlatTextPrefix);
  EXPECT_FALSE(bound.weights->tied);
  EXPECT_NE(bound.weights->lm_head.data, bound.weights->embed_tokens.data);
  EXPECT_EQ(bound.weights->lm_head.shape, (std::vector<int64_t>{512, 64}));
  EXPECT_TRUE(bound.report.skipped_vision.empty());
}

TEST_F(WeightBinding, BindsTheMtpHeadWhenTheCheckpointHoldsIt) {
  const std::string dir = tmp_ / "mtp";
  RandomCheckpointOptions writer;
  writer.with_mtp = true;
  test::write_micro_checkpoint(dir, {}, writer);
  Bound bound = bind_dir(dir);
  ASSERT_TRUE(bound.weights.ok()) << bound.weights.status().message();
  ASSERT_TRUE(bound.weights->mtp.has_value());
  const MtpWeights& mtp = *bound.weights->mtp;
  EXPECT_EQ(mtp.pre_fc_norm_embedding.name, "mtp.pre_fc_norm_embedding.weight");
  EXPECT_EQ(mtp.pre_fc_norm_hidden.shape, (std::vector<int64_t>{64}));
  EXPECT_EQ(mtp.fc.shape, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(mtp.norm.name, "mtp.norm.weight");
  ASSERT_EQ(mtp.layers.size(), 1u);
  EXPECT_EQ(mtp.layers[0].type, LayerType::full_attention);
  EXPECT_EQ(mtp.layers[0].attention.q_proj.shape, (std::vector<int64_t>{4 * 2 * 32, 64}));
  EXPECT_EQ(mtp.layers[0].attention.k_norm.name, "mtp.layers.0.self_attn.k_norm.weight");
  EXPECT_EQ(mtp.layers[0].mlp.down_proj.shape, (std::vector<int64_t>{64, 96}));
  EXPECT_EQ(mtp.layers[0].post_attention_layernorm.name, "mtp.layers.0.post_attention_layernorm.weight");
  // 2 pre-fc norms + fc + 2 layer norms + 6 attention + 3 MLP + final norm, every one bound.
  size_t bound_views = 0;
  for (const TensorView* view : text_views(*bound.weights))
    if (view->name.rfind("mtp.", 0) == 0) ++bound_views;
  EXPECT_EQ(bound_views, 15u);
  // fc, q/k/v/o and gate/up/down are repacked with the model's matmuls; the decode stream is the model's alone.
  EXPECT_EQ(mtp_matmul_weights(*bound.weights).size(), 8u);
  EXPECT_EQ(packed_matmul_weights(*bound.weights).size(), matmul_weights(*bound.weights).size() + 8);
}

TEST_F(WeightBinding, CheckpointWithoutMtpTensorsBindsWithoutTheHead) {
  Bound bound = bind_dir(released_);
  ASSERT_TRUE(bound.weights.ok()) << bound.weights.status().message();
  EXPECT_FALSE(bound.weights->mtp.has_value());
  EXPECT_TRUE(mtp_matmul_weights(*bound.weights).empty());
}

TEST_F(WeightBinding, MtpHeadIsCheckedAsStrictlyAsTheModel) {
  const std::string dir = tmp_ / "mtp";
  RandomCheckpointOptions writer;
  writer.with_mtp = true;
  test::write_micro_checkpoint(dir, {}, writer);
  test::rewrite_checkpoint(dir, tmp_ / "mtp-broken", [](std::vector<EditableTensor>& tensors) {
    std::erase_if(tensors, [](const EditableTensor& t) { return t.decl.name == "mtp.layers.0.mlp.up_proj.weight"; });
    for (EditableTensor& t : tensors) {
      if (t.decl.name == "mtp.fc.weight") std::swap(t.decl.shape[0], t.decl.shape[1]);
      if (t.decl.name == "mtp.norm.weight") t.decl.dtype = DType::I16;
    }
    tensors.push_back({TensorDecl{"mtp.layers.1.input_layernorm.weight", DType::BF16, {64}}, std::string(128, '\0')});
  });
  const Bound bound = bind_dir(tmp_ / "mtp-broken");
  EXPECT_ERROR_CONTAINS(bound.weights, "(4 problems)");
  EXPECT_ERROR_CONTAINS(bound.weights, "missing tensor \"mtp.layers.0.mlp.up_proj.weight\" (expected shape [96, 64])");
  EXPECT_ERROR_CONTAINS(bound.weights, "tensor \"mtp.fc.weight\": expected shape [64, 128], found [128, 64]");
  EXPECT_ERROR_CONTAINS(bound.weights, "tensor \"mtp.norm.weight\": expected dtype BF16, F16 or F32, found I16");
  EXPECT_ERROR_CONTAINS(bound.weights, "unexpected tensor \"mtp.layers.1.input_layernorm.weight\"");
}

TEST_F(WeightBinding, OneMtpTensorMeansTheWholeHeadIsExpected) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    tensors.push_back({TensorDecl{"mtp.norm.weight", DType::BF16, {64}}, std::string(128, '\0')});
  });
  const Bound bound = bind_dir(dir);
  EXPECT_ERROR_CONTAINS(bound.weights, "(14 problems)");  // the other 14 of the head's 15 tensors
  EXPECT_ERROR_CONTAINS(bound.weights, "missing tensor \"mtp.fc.weight\" (expected shape [64, 128])");
}

TEST_F(WeightBinding, AcceptsFp16AndFp32Checkpoints) {
  for (DType dtype : {DType::F16, DType::F32}) {
    const std::string dir = tmp_ / std::string(dtype_name(dtype));
    RandomCheckpointOptions writer;
    writer.dtype = dtype;
    test::write_micro_checkpoint(dir, {}, writer);
    const Bound bound = bind_dir(dir);
    ASSERT_TRUE(bound.weights.ok()) << bound.weights.status().message();
    EXPECT_EQ(bound.weights->layers[0].deltanet.A_log.dtype, dtype);
    EXPECT_EQ(bound.weights->embed_tokens.dtype, dtype);
  }
}

TEST_F(WeightBinding, MissingTensorIsNamed) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    std::erase_if(tensors, [](const EditableTensor& t) { return t.decl.name == "model.language_model.layers.2.linear_attn.dt_bias"; });
  });
  const Bound bound = bind_dir(dir);
  EXPECT_ERROR_CONTAINS(bound.weights, "missing tensor \"model.language_model.layers.2.linear_attn.dt_bias\" (expected shape [4])");
}

TEST_F(WeightBinding, WrongShapeIsNamedWithExpectedAndFound) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    for (EditableTensor& t : tensors)
      if (t.decl.name == "model.language_model.layers.1.mlp.up_proj.weight") std::swap(t.decl.shape[0], t.decl.shape[1]);
  });
  EXPECT_ERROR_CONTAINS(bind_dir(dir).weights,
                        "tensor \"model.language_model.layers.1.mlp.up_proj.weight\": expected shape [96, 64], found [64, 96]");
}

TEST_F(WeightBinding, WrongDtypeIsNamed) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    for (EditableTensor& t : tensors)
      if (t.decl.name == "model.language_model.norm.weight") t.decl.dtype = DType::I16;
  });
  EXPECT_ERROR_CONTAINS(bind_dir(dir).weights, "expected dtype BF16, F16 or F32, found I16");
}

TEST_F(WeightBinding, UnexpectedTensorIsNamed) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    tensors.push_back({TensorDecl{"model.language_model.layers.9.mlp.up_proj.weight", DType::BF16, {2}}, std::string(4, '\0')});
  });
  EXPECT_ERROR_CONTAINS(bind_dir(dir).weights, "unexpected tensor \"model.language_model.layers.9.mlp.up_proj.weight\"");
}

TEST_F(WeightBinding, ReportsEveryProblemAtOnce) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    std::erase_if(tensors, [](const EditableTensor& t) { return t.decl.name.find("layers.0.") != std::string::npos; });
  });
  const Bound bound = bind_dir(dir);
  EXPECT_ERROR_CONTAINS(bound.weights, "(14 problems)");  // 2 norms + 9 DeltaNet + 3 MLP tensors of layer 0
}

TEST_F(WeightBinding, UntiedConfigWithoutHeadIsAnError) {
  const std::string dir = tmp_ / "untied";
  test::write_micro_checkpoint(dir, {.nested = true, .tied = false});
  test::rewrite_checkpoint(dir, tmp_ / "untied-no-head", [](std::vector<EditableTensor>& tensors) {
    std::erase_if(tensors, [](const EditableTensor& t) { return t.decl.name == "lm_head.weight"; });
  });
  EXPECT_ERROR_CONTAINS(bind_dir(tmp_ / "untied-no-head").weights,
                        "missing tensor \"lm_head.weight\" (expected shape [512, 64], since tie_word_embeddings is false)");
}

TEST_F(WeightBinding, TiedCheckpointWithStoredHeadReportsItIgnored) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    for (const EditableTensor& t : tensors)
      if (t.decl.name == "model.language_model.embed_tokens.weight") {
        EditableTensor head = t;
        head.decl.name = "lm_head.weight";
        tensors.push_back(head);
        break;
      }
  });
  const Bound bound = bind_dir(dir);
  ASSERT_TRUE(bound.weights.ok()) << bound.weights.status().message();
  ASSERT_EQ(bound.report.ignored.size(), 1u);
  EXPECT_NE(bound.report.ignored[0].find("lm_head.weight"), std::string::npos);
}

TEST_F(WeightBinding, NoEmbeddingMeansNoKnownLayout) {
  const std::string dir = rewritten([](std::vector<EditableTensor>& tensors) {
    for (EditableTensor& t : tensors)
      if (t.decl.name == "model.language_model.embed_tokens.weight") t.decl.name = "transformer.wte.weight";
  });
  EXPECT_ERROR_CONTAINS(bind_dir(dir).weights, "released layout");
}

TEST(WeightTable, MatchesReleasedTensorCountsOfRealShapes) {
  // Qwen3.5-0.8B: 36 F32 tensors = (A_log + linear_attn.norm) × 18 linear layers (spec §1.4).
  auto config = parse_model_config(test::read_file(DS_TEST_DATA_DIR "/qwen3.5-27b.config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  WeightTableOptions options;
  options.lm_head = !config->tie_word_embeddings;
  options.vision = true;
  options.mtp = true;
  const auto table = qwen35_weight_table(*config, options);
  // The 27B inventory seen in a real checkpoint has 1199 tensors including vision and MTP (spec §2.6).
  EXPECT_EQ(table.size(), 1199u);
  EXPECT_EQ(std::count_if(table.begin(), table.end(), [](const WeightSpec& s) { return s.stored_dtype == DType::F32; }), 96);
  // Its MTP head: 15 tensors, 424,699,392 parameters (a figure reported for the real 27B file;
  // ../shared/docs/qwen35-mtp.md §1.1).
  int64_t mtp_tensors = 0, mtp_params = 0;
  for (const WeightSpec& spec : table) {
    if (spec.part != WeightPart::mtp) continue;
    ++mtp_tensors;
    int64_t n = 1;
    for (int64_t d : spec.shape) n *= d;
    mtp_params += n;
  }
  EXPECT_EQ(mtp_tensors, 15);
  EXPECT_EQ(mtp_params, 424'699'392);
}

}  // namespace
}  // namespace ds
