// The MTP head read from a GGUF's nextn block: tests/fixtures/gguf/mtp_b_bf16_untied-BF16.gguf, which
// llama.cpp's own convert_hf_to_gguf.py made of tests/fixtures/mtp/mtp_b_bf16_untied with its head
// (tools/reference/make_gguf_mtp_fixtures.py). The head's tensors read back are the safetensors
// checkpoint's, bit for bit; its MTP logits and hidden are the safetensors model's bit for bit and the
// PyTorch reference's within the fixture's tolerance; a missing or broken nextn tensor is named. And a
// random model with a head written by our writer in every file type: BF16 / F32 give the safetensors
// model's MTP logits bit for bit, the quantised types bind the head's matmuls in their block formats.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "hf_reference.h"
#include "io/safetensors_checkpoint.h"
#include "kernels/ref/ref_backend.h"
#include "kernels/weight_access.h"
#include "micro_checkpoint.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_export.h"
#include "model/model_loader.h"
#include "model/qwen35_weights.h"
#include "model/random_checkpoint.h"
#include "model/sequence_runner.h"
#include "model_logits.h"
#include "gguf_edit.h"
#include "test_util.h"

namespace ds::gguf_mtp_test {
namespace {

namespace fs = std::filesystem;
const fs::path kFixture = fs::path(DS_FIXTURES_DIR) / "mtp" / "mtp_b_bf16_untied";
const std::string kGguf = (fs::path(DS_FIXTURES_DIR) / "gguf" / "mtp_b_bf16_untied-BF16.gguf").string();

TEST(GgufMtp, HeadTensorsAreTheSafetensorsCheckpointsBitForBit) {
  auto gguf = GgufCheckpoint::open(kGguf);
  ASSERT_TRUE(gguf.ok()) << gguf.status().message();
  EXPECT_EQ(gguf->config().text.num_hidden_layers, 3);
  EXPECT_EQ(gguf->config().text.mtp_num_hidden_layers, 1);
  auto original = SafetensorsCheckpoint::open_dir(kFixture.string());
  ASSERT_TRUE(original.ok()) << original.status().message();
  int compared = 0;
  for (const auto& [name, want] : original->tensors()) {
    if (!name.starts_with(kMtpPrefix)) continue;
    SCOPED_TRACE(name);
    const TensorView* got = gguf->find(name);
    ASSERT_NE(got, nullptr);
    ASSERT_EQ(got->shape, want.shape);
    if (got->dtype == want.dtype) {  // the matmul weights: BF16 as stored
      ASSERT_EQ(got->nbytes, want.nbytes);
      EXPECT_EQ(std::memcmp(got->data, want.data, want.nbytes), 0);
    } else {  // the norms: stored 1 + w in F32, read back as w in F32 — exactly the BF16 w
      EXPECT_EQ(got->dtype, DType::F32);
      std::vector<float> ours(want.numel()), theirs(want.numel());
      weight_span(*got, 0, want.numel(), ours.data());
      weight_span(want, 0, want.numel(), theirs.data());
      EXPECT_EQ(ours, theirs);
    }
    ++compared;
  }
  EXPECT_EQ(compared, 15);  // the dense head's 15 tensors
  int mtp_in_gguf = 0;
  for (const auto& [name, _] : gguf->tensors()) mtp_in_gguf += name.starts_with(kMtpPrefix);
  EXPECT_EQ(mtp_in_gguf, compared);  // and nothing else of the nextn block
}

TEST(GgufMtp, MtpLogitsAreTheSafetensorsModelsBitForBitAndTheReferences) {
  auto reference = SafetensorsCheckpoint::open_file((kFixture / "mtp_reference.safetensors").string());
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  for (const auto& backend_ptr : test::logit_backends())
  for (ComputeMode mode : {ComputeMode::f32, ComputeMode::fast}) {
    Backend& backend = *backend_ptr;
    SCOPED_TRACE(testing::Message() << backend.name() << (mode == ComputeMode::fast ? " fast" : " f32"));
    auto from_gguf = load_model(kGguf, backend, mode);
    auto from_safetensors = load_model(kFixture.string(), backend, mode);
    ASSERT_TRUE(from_gguf.ok()) << from_gguf.status().message();
    ASSERT_TRUE(from_safetensors.ok()) << from_safetensors.status().message();
    ASSERT_TRUE(from_gguf->model->has_mtp());
    const bool fast = from_gguf->model->mode() == ComputeMode::fast;
    const double tolerance = fast ? 3e-2 : 1e-4;  // mtp_fixture_test.cpp's bounds
    const int64_t V = from_gguf->config.text.vocab_size, H = from_gguf->config.text.hidden_size;
    double worst = 0;
    for (int k = 0; reference->contains("prompt" + std::to_string(k) + ".sequence"); ++k) {
      const std::string p = "prompt" + std::to_string(k) + ".";
      const TensorView& seq = *reference->find(p + "sequence");
      std::vector<int64_t> wide(seq.numel());
      std::memcpy(wide.data(), seq.data, seq.nbytes);
      const std::vector<int32_t> sequence(wide.begin(), wide.end());
      std::vector<float> ref_logits(reference->find(p + "mtp_logits")->numel());
      weight_span(*reference->find(p + "mtp_logits"), 0, static_cast<int64_t>(ref_logits.size()), ref_logits.data());

      // Teacher-forced over every pair, then one chained step: logits and the head's hidden.
      const auto total = static_cast<int64_t>(sequence.size());
      std::vector<float> logits[2], g[2], chained[2];
      for (int m = 0; m < 2; ++m) {
        Qwen35Model& model = *(m == 0 ? from_gguf : from_safetensors)->model;
        SequenceRunner runner(model, total + 2, total, default_kv_dtype(model), kKvBlockSize, /*with_mtp=*/true);
        std::vector<float> none, hidden, next_g;
        ASSERT_TRUE(runner.feed(sequence, LogitsRows::none, none, LogitsRows::all, hidden).ok());
        const std::span<const int32_t> next(sequence.data() + 1, static_cast<size_t>(total - 1));
        ASSERT_TRUE(runner.mtp(std::span(hidden).first(static_cast<size_t>((total - 1) * H)), next, 0, 0, LogitsRows::all,
                               logits[m], g[m]).ok());
        const std::vector<float> last(g[m].end() - H, g[m].end());
        ASSERT_TRUE(runner.mtp(last, std::span(&sequence.back(), 1), total - 1, 1, LogitsRows::last, chained[m], next_g).ok());
      }
      EXPECT_EQ(logits[0], logits[1]) << p << "MTP logits";
      EXPECT_EQ(g[0], g[1]) << p << "MTP hidden";
      EXPECT_EQ(chained[0], chained[1]) << p << "chained step";
      worst = std::max(worst, test::worst_error(logits[0], ref_logits, V));
    }
    std::cout << "GGUF MTP logits [" << backend.name() << "] " << (fast ? "fast" : "f32") << ": " << worst
              << " from the PyTorch reference\n";
    EXPECT_LE(worst, tolerance);
  }
}

// A file made by our writer from the fixture, without one tensor of the head (the reader's
// completeness check, not binding, names it in the file's terms).
TEST(GgufMtp, MissingNextnTensorIsNamed) {
  auto config = load_model_config(kFixture.string());
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto checkpoint = SafetensorsCheckpoint::open_dir(kFixture.string());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  WeightTableOptions table_options;
  table_options.text_prefix = kFlatTextPrefix;
  table_options.lm_head = true;
  table_options.mtp = true;
  std::vector<WeightSpec> table = qwen35_weight_table(*config, table_options);
  std::erase_if(table, [](const WeightSpec& s) { return s.name == "mtp.pre_fc_norm_hidden.weight"; });
  test::TempDir tmp;
  GgufExportOptions options;
  options.path = tmp / "m.gguf";
  auto source = [&](const WeightSpec& spec, uint64_t begin, uint64_t end, float* out) {
    weight_span(*checkpoint->find(spec.name), static_cast<int64_t>(begin), static_cast<int64_t>(end - begin), out);
  };
  ASSERT_TRUE(write_gguf(*config, table, kFlatTextPrefix, source, options).ok());
  EXPECT_ERROR_CONTAINS(GgufCheckpoint::open(options.path),
                        "m.gguf: missing tensor \"blk.3.nextn.hnorm.weight\" (the MTP head's mtp.pre_fc_norm_hidden.weight, "
                        "ggml shape [64]): qwen35.nextn_predict_layers is 1, so blocks 3..3 must hold the whole head");
}

// --- the fixture, changed in place (tests/support/gguf_edit.h) ---

TEST(GgufMtp, BrokenNextnTensorsAreNamed) {
  test::TempDir tmp;
  const std::string fixture = test::read_file(kGguf);
  {  // a type the reader does not take
    std::string bytes = fixture;
    const uint32_t i16 = 25;  // 2 bytes per value like BF16, so the layout stays valid
    std::memcpy(bytes.data() + test::gguf_tensor_info(bytes, "blk.3.nextn.eh_proj.weight") + 4 + 16, &i16, 4);
    EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes),
                          "tensor \"blk.3.nextn.eh_proj.weight\" (mtp.fc.weight): ggml type I16 is not supported yet");
  }
  {  // the wrong shape
    std::string bytes = fixture;
    const size_t info = test::gguf_tensor_info(bytes, "blk.3.ffn_up.weight");
    uint64_t ne[2];
    std::memcpy(ne, bytes.data() + info + 4, 16);
    std::swap(ne[0], ne[1]);
    std::memcpy(bytes.data() + info + 4, ne, 16);
    EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes),
                          "tensor \"mtp.layers.0.mlp.up_proj.weight\": expected shape [96, 64], found [64, 96]");
  }
  {  // a name llama.cpp's nextn block may hold but a Qwen3.5 head has no tensor for
    std::string bytes = fixture;
    const size_t at = test::gguf_tensor_info(bytes, "blk.3.nextn.enorm.weight") - std::string("enorm.weight").size();
    bytes.replace(at, 5, "xnorm");
    EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes), "unexpected tensor \"blk.3.nextn.xnorm.weight\"");
  }
  {  // nextn tensors in a second nextn block are MTP layer 1's, which nextn_predict_layers 1 does not have
    std::string bytes = fixture;
    const size_t at = test::gguf_tensor_info(bytes, "blk.3.attn_q.weight") - std::string("3.attn_q.weight").size();
    bytes[at] = '4';
    const auto status = test::open_changed_gguf(tmp, bytes);
    EXPECT_ERROR_CONTAINS(status, "missing tensor \"blk.3.attn_q.weight\" (the MTP head's mtp.layers.0.self_attn.q_proj.weight");
  }
}

// --- random models with a head: our writer, every file type ---

// Teacher-forced MTP logits [n − 1, V] over a prompt of n tokens.
std::vector<float> mtp_logits(Qwen35Model& model, const std::vector<int32_t>& prompt) {
  const auto n = static_cast<int64_t>(prompt.size());
  const int64_t H = model.config().hidden_size;
  SequenceRunner runner(model, n, n, default_kv_dtype(model), kKvBlockSize, /*with_mtp=*/true);
  std::vector<float> none, hidden, logits, g;
  EXPECT_TRUE(runner.feed(prompt, LogitsRows::none, none, LogitsRows::all, hidden).ok());
  EXPECT_TRUE(runner.mtp(std::span(hidden).first(static_cast<size_t>((n - 1) * H)), std::span(prompt).subspan(1), 0, 0,
                         LogitsRows::all, logits, g).ok());
  return logits;
}

TEST(GgufMtp, RandomHeadInEveryFileType) {
  test::TempDir tmp;
  const test::MicroOptions micro{.tied = false, .block_sized = true};
  // The GGUF fixtures' tokenizer (vocabulary 512, as the micro models'), as gguf_export_test.cpp takes it.
  const fs::path hf_tokenizer = fs::path(DS_FIXTURES_DIR) / "gguf" / "hf_tokenizer";
  const std::string tokenizer_config = test::read_file((hf_tokenizer / "tokenizer_config.json").string());
  const TokenizerAssets assets{test::read_file((hf_tokenizer / "tokenizer.json").string()), tokenizer_config,
                               nlohmann::json::parse(tokenizer_config)["chat_template"].get<std::string>()};
  const std::vector<int32_t> prompt = test::random_tokens(19, 500, 3);
  RefBackend ref;
  std::map<DType, LoadedModel> originals;
  for (DType dtype : {DType::BF16, DType::F32}) {
    RandomCheckpointOptions options;
    options.seed = 7;
    options.with_mtp = true;
    options.dtype = dtype;
    options.out_dir = tmp / std::string(dtype_name(dtype));
    ASSERT_TRUE(write_random_checkpoint(test::micro_config_json(micro), options, assets).ok());
    auto loaded = load_model(options.out_dir, ref, ComputeMode::f32);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    ASSERT_TRUE(loaded->model->has_mtp());
    originals.emplace(dtype, std::move(loaded).value());
  }
  const std::vector<float> bf16_logits = mtp_logits(*originals.at(DType::BF16).model, prompt);
  const int64_t V = originals.at(DType::BF16).config.text.vocab_size;
  for (GgufFileType type : {GgufFileType::bf16, GgufFileType::f32, GgufFileType::f16, GgufFileType::q8_0, GgufFileType::q6_k,
                            GgufFileType::q5_k_m, GgufFileType::q4_k_m}) {
    SCOPED_TRACE(gguf_file_type_name(type));
    const DType dtype = type == GgufFileType::f32 ? DType::F32 : DType::BF16;
    RandomCheckpointOptions options;
    options.seed = 7;
    options.with_mtp = true;
    options.dtype = dtype;
    const std::string path = tmp / (std::string(gguf_file_type_name(type)) + ".gguf");
    const Status written = write_random_gguf(test::micro_config_json(micro), options, path, type, assets);
    ASSERT_TRUE(written.ok()) << written.message();
    auto gguf = load_model(path, ref, ComputeMode::f32);
    ASSERT_TRUE(gguf.ok()) << gguf.status().message();
    ASSERT_TRUE(gguf->model->has_mtp());
    const TensorView& fc = gguf->model->weights().mtp->fc;
    const std::vector<float> got = mtp_logits(*gguf->model, prompt);
    if (type == GgufFileType::bf16 || type == GgufFileType::f32) {
      EXPECT_EQ(got, mtp_logits(*originals.at(dtype).model, prompt)) << "the safetensors model's MTP logits";
      EXPECT_EQ(fc.format, WeightFormatId::stored);
    } else if (type == GgufFileType::f16) {
      EXPECT_LE(test::worst_error(got, bf16_logits, V), 1e-3);
    } else {
      // The head's matmuls stay in the file's blocks (the format seam; repacked into the block type's
      // panels), and the MTP logits within the quantisation's error. Measured: Q8_0 0.048, Q6_K 0.127,
      // Q5_K_M 0.207, Q4_K_M 0.222 (random micro logits are small: RandomGguf says the same of the model's).
      EXPECT_NE(fc.format, WeightFormatId::stored);
      const double error = test::worst_error(got, bf16_logits, V);
      std::cout << gguf_file_type_name(type) << ": MTP logits error " << error << ", mtp.fc format " << static_cast<int>(fc.format) << "\n";
      EXPECT_LE(error, type == GgufFileType::q8_0 ? 0.1 : 0.5);
    }
  }
}

}  // namespace
}  // namespace ds::gguf_mtp_test
