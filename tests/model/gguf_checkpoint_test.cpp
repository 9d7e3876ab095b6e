// GGUF models made by llama.cpp's own converter (tests/fixtures/gguf, tools/reference/
// make_gguf_model_fixtures.py) against gguf-py and against the safetensors originals: every tensor's
// values bit-identical to gguf-py's dequantisation; every HF tensor back with the HF name, shape and
// value (llama.cpp's conversions undone); bad files refused with one clear message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/gguf_set.h"
#include "io/safetensors_checkpoint.h"
#include "kernels/formats/q8_0/q8_0_format.h"
#include "kernels/formats/row_major/row_major_format.h"
#include "kernels/weight_access.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_config.h"
#include "model/qwen35_weights.h"
#include "gguf_edit.h"
#include "test_util.h"

namespace ds {
namespace {

namespace fs = std::filesystem;
const fs::path kGgufDir = fs::path(DS_FIXTURES_DIR) / "gguf";
const std::string kBf16 = (kGgufDir / "c_bf16_untied-BF16.gguf").string();
const std::string kF32 = (kGgufDir / "d_text_only-F32.gguf").string();
const std::string kQ8_0 = (kGgufDir / "c_bf16_untied-Q8_0-00001-of-00003.gguf").string();


// Every value of a GGUF tensor through the formats' reference dequantisation.
std::vector<float> dequantized(const GgufPart& part, const GgufTensor& t) {
  TensorView view;
  view.name = std::string(t.name);
  const int64_t cols = t.shape[0];
  view.shape = {t.numel / cols, cols};
  view.data = part.data(t);
  view.nbytes = t.bytes;
  const WeightFormat* format = nullptr;
  switch (t.type.id) {  // ggml type ids
    case 8: view.format = WeightFormatId::q8_0; break;
    case 12: view.format = WeightFormatId::q4_k; break;
    case 13: view.format = WeightFormatId::q5_k; break;
    case 14: view.format = WeightFormatId::q6_k; break;
    case 23: view.format = WeightFormatId::iq4_xs; break;
    default: view.dtype = t.type.id == 0 ? DType::F32 : t.type.id == 1 ? DType::F16 : DType::BF16;
  }
  format = &format_of(view);
  std::vector<float> out(static_cast<size_t>(t.numel));  // [rows, cols]
  for (int64_t r = 0; r < view.shape[0]; ++r) format->dequantize_row(view, r, out.data() + r * cols);
  return out;
}

// model_expected.json: the F32 / BF16 / Q8_0 fixtures; kquant_expected.json: the Q4_K, Q5_K, Q6_K,
// IQ4_XS and Q4_K_M files llama.cpp quantised.
TEST(GgufDequantization, EveryTensorIsBitIdenticalToGgufPy) {
  int64_t checked = 0;
  for (const char* oracle : {"model_expected.json", "kquant_expected.json"}) {
    std::ifstream in(kGgufDir / oracle);
    const auto expected = nlohmann::json::parse(in);
    for (const auto& [file, tensors] : expected["files"].items()) {
      auto mapped = MappedFile::open((kGgufDir / file).string());
      ASSERT_TRUE(mapped.ok()) << mapped.status().message();
      GgufPart part{file, std::move(mapped).value(), {}};
      auto parsed = parse_gguf(part.file.bytes(), file);
      ASSERT_TRUE(parsed.ok()) << parsed.status().message();
      part.gguf = std::move(parsed).value();
      ASSERT_EQ(part.gguf.tensors.size(), tensors.size()) << file;
      for (const GgufTensor& t : part.gguf.tensors) {
        const auto& want = tensors.at(std::string(t.name));
        EXPECT_EQ(t.type.name, want["type"].get<std::string>()) << t.name;
        EXPECT_EQ(t.shape, want["shape"].get<std::vector<int64_t>>()) << t.name;
        const std::vector<float> values = dequantized(part, t);
        EXPECT_EQ(test::fnv1a64(values.data(), values.size() * 4), want["fnv1a64_f32"].get<std::string>()) << file << ": " << t.name;
        for (size_t i = 0; i < want["first"].size(); ++i) EXPECT_EQ(values[i], want["first"][i].get<float>()) << t.name;
        ++checked;
      }
    }
  }
  // Three models of 56 tensors (one split in 3), one of 41; five K-quant files of 56.
  EXPECT_EQ(checked, 56 + 56 + 56 + 41 + 5 * 56);
}

// Every text tensor of the safetensors original against the GGUF's, by HF name: same shape and, as
// the model uses them, the same values (gguf_checkpoint.h: norms as 1 + w, A_log as −exp(A_log)).
void expect_same_model(const std::string& gguf_path, const std::string& fixture, bool q8_0) {
  auto gguf = GgufCheckpoint::open(gguf_path);
  ASSERT_TRUE(gguf.ok()) << gguf.status().message();
  auto original = SafetensorsCheckpoint::open_dir((fs::path(DS_FIXTURES_DIR) / fixture).string());
  ASSERT_TRUE(original.ok());
  const std::string prefix = original->contains("model.language_model.embed_tokens.weight") ? "model.language_model." : "model.";
  int64_t compared = 0;
  for (const auto& [name, want] : original->tensors()) {
    if (name.starts_with("model.visual.") || name.starts_with("mtp.")) continue;
    const std::string hf = name.starts_with(prefix) ? kGgufTextPrefix + name.substr(prefix.size()) : name;
    const TensorView* got = gguf->find(hf);
    ASSERT_NE(got, nullptr) << hf;
    ASSERT_EQ(got->shape, want.shape) << hf;
    const int64_t cols = want.shape.back(), rows = static_cast<int64_t>(want.numel()) / cols;
    std::vector<float> ours(want.numel()), theirs(want.numel());  // [rows, cols], in the GGUF's column order
    TensorView matrix = *got;
    matrix.shape = {rows, cols};
    // A tensor kept in the file's column order (Checkpoint::column_heads): HF's columns in that order.
    const std::vector<int32_t>& heads = gguf->column_heads(hf);
    const int64_t run = heads.empty() ? cols : cols / static_cast<int64_t>(heads.size());
    std::vector<float> hf_row(cols);  // [cols] HF order
    for (int64_t r = 0; r < rows; ++r) {
      format_of(matrix).dequantize_row(matrix, r, ours.data() + r * cols);
      weight_span(want, r * cols, cols, hf_row.data());
      for (int64_t c = 0; c < cols; ++c)
        theirs[r * cols + c] = heads.empty() ? hf_row[c] : hf_row[heads[c / run] * run + c % run];
    }
    const bool centred = hf.ends_with("layernorm.weight") || hf.ends_with("q_norm.weight") || hf.ends_with("k_norm.weight") ||
                         hf == "model.norm.weight";
    for (size_t i = 0; i < ours.size(); ++i) {
      if (centred) {
        ASSERT_EQ(1.0f + ours[i], 1.0f + theirs[i]) << hf << "[" << i << "]: the scale 1 + w";
      } else if (hf.ends_with("A_log")) {
        ASSERT_EQ(std::exp(ours[i]), std::exp(theirs[i])) << hf << "[" << i << "]: the decay rate exp(A_log)";
      } else if (q8_0 && want.shape.size() == 2) {  // every 2-D tensor of the Q8_0 fixture is Q8_0 in the file
        // Q8_0 of llama.cpp's quantiser: d = max |w| of the block / 127 rounded to fp16 (relative error
        // ≤ 2^-11), q = round(w / d): |w − fp16(d)·q| ≤ d / 2 + 127 · d · 2^-11. Blocks are runs of 32
        // in the file's column order, which `theirs` follows. (Where value heads were permuted as whole
        // blocks, HF's runs are the file's blocks too.)
        const size_t block = i / kQ8_0Block * kQ8_0Block;
        float block_max = 0;
        for (size_t j = block; j < block + kQ8_0Block; ++j) block_max = std::max(block_max, std::fabs(theirs[j]));
        const float bound = block_max / 127.0f * (0.5f + 127.0f / 2048.0f) * 1.001f;
        ASSERT_LE(std::fabs(ours[i] - theirs[i]), bound) << hf << "[" << i << "]";
      } else {
        ASSERT_EQ(ours[i], theirs[i]) << hf << "[" << i << "]";
      }
    }
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int64_t>(gguf->tensors().size()));
}

TEST(GgufCheckpoint, Bf16FileGivesBackTheHfTensors) { expect_same_model(kBf16, "c_bf16_untied", false); }
TEST(GgufCheckpoint, F32FileGivesBackTheHfTensors) { expect_same_model(kF32, "d_text_only", false); }
// Head size 16: a Q8_0 block of out_proj spans two value heads, so its columns keep the file's order
// and the checkpoint says which head each run holds (the model permutes out_proj's input instead).
TEST(GgufCheckpoint, Q8_0SplitSetGivesBackTheHfTensorsWithinQ8_0Rounding) {
  expect_same_model(kQ8_0, "c_bf16_untied", true);
  auto gguf = GgufCheckpoint::open(kQ8_0);
  ASSERT_TRUE(gguf.ok());
  const std::string out_proj = "model.layers.0.linear_attn.out_proj.weight";
  EXPECT_EQ(gguf->find(out_proj)->format, WeightFormatId::q8_0);
  // nK = 2, nV = 6 (r = 3): file head t = j·nK + g holds HF head g·r + j.
  EXPECT_EQ(gguf->column_heads(out_proj), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(gguf->column_heads("model.layers.0.linear_attn.in_proj_z.weight").empty());
  // The embedding table stays in its blocks (the embedding reads rows through the format).
  EXPECT_EQ(gguf->find("model.embed_tokens.weight")->format, WeightFormatId::q8_0);
}
// Head size 128: out_proj's value heads are whole Q8_0 blocks, permuted as blocks (not expanded).
TEST(GgufCheckpoint, Q8_0WithRealHeadSizesGivesBackTheHfTensorsWithinQ8_0Rounding) {
  const std::string path = (kGgufDir / "e_real_head_sizes-Q8_0.gguf").string();
  expect_same_model(path, "e_real_head_sizes", true);
  auto gguf = GgufCheckpoint::open(path);
  ASSERT_TRUE(gguf.ok());
  EXPECT_EQ(gguf->find("model.layers.0.linear_attn.out_proj.weight")->format, WeightFormatId::q8_0);
}

TEST(GgufCheckpoint, ConfigMatchesTheHfConfig) {
  for (const auto& [path, fixture] : {std::pair{kBf16, "c_bf16_untied"}, std::pair{kF32, "d_text_only"}}) {
    auto gguf = GgufCheckpoint::open(path);
    ASSERT_TRUE(gguf.ok()) << gguf.status().message();
    auto hf = load_model_config((fs::path(DS_FIXTURES_DIR) / fixture).string());
    ASSERT_TRUE(hf.ok());
    const TextConfig &a = gguf->config().text, &b = hf->text;
    EXPECT_EQ(a.vocab_size, b.vocab_size);
    EXPECT_EQ(a.hidden_size, b.hidden_size);
    EXPECT_EQ(a.intermediate_size, b.intermediate_size);
    EXPECT_EQ(a.num_hidden_layers, b.num_hidden_layers);
    EXPECT_EQ(a.num_attention_heads, b.num_attention_heads);
    EXPECT_EQ(a.num_key_value_heads, b.num_key_value_heads);
    EXPECT_EQ(a.head_dim, b.head_dim);
    EXPECT_EQ(a.linear_conv_kernel_dim, b.linear_conv_kernel_dim);
    EXPECT_EQ(a.linear_key_head_dim, b.linear_key_head_dim);
    EXPECT_EQ(a.linear_value_head_dim, b.linear_value_head_dim);
    EXPECT_EQ(a.linear_num_key_heads, b.linear_num_key_heads);
    EXPECT_EQ(a.linear_num_value_heads, b.linear_num_value_heads);
    EXPECT_EQ(a.layer_types, b.layer_types);
    EXPECT_EQ(a.rope.rope_theta, b.rope.rope_theta);
    EXPECT_EQ(a.rope.partial_rotary_factor, b.rope.partial_rotary_factor);
    EXPECT_EQ(a.rope.mrope_section, b.rope.mrope_section);
    EXPECT_EQ(static_cast<float>(a.rms_norm_eps), static_cast<float>(b.rms_norm_eps));  // GGUF stores f32
    EXPECT_EQ(gguf->config().tie_word_embeddings, hf->tie_word_embeddings);
  }
}

// --- bad files: a copy of a fixture, changed in place ---

std::string fixture_bytes(const std::string& path) { return test::read_file(path); }

TEST(GgufBadFiles, TruncatedFileNamesWhatIsMissing) {
  test::TempDir tmp;
  const std::string bytes = fixture_bytes(kBf16);
  EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes.substr(0, bytes.size() / 2)), "m.gguf");
  EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes.substr(0, 1000)), "m.gguf");
}

TEST(GgufBadFiles, OtherArchitecturesAreRefusedByName) {
  test::TempDir tmp;
  std::string bytes = fixture_bytes(kBf16);
  const size_t at = bytes.find("qwen35", bytes.find("general.architecture"));
  bytes.replace(at, 6, "llama3");
  EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes), "architecture \"llama3\" is not supported (expected \"qwen35\"");
}

TEST(GgufBadFiles, MoeArchitectureIsRefusedByName) {
  GgufFile gguf;
  GgufEntry arch;
  arch.key = "general.architecture";
  arch.type = arch.element_type = GgufType::string;
  arch.strings = {"qwen35moe"};
  gguf.metadata.push_back(arch);
  EXPECT_ERROR_CONTAINS(gguf_model_config(gguf, 512, true, "x.gguf"),
                        "x.gguf: architecture \"qwen35moe\" is not supported (expected \"qwen35\", dense Qwen3.5 / Qwen3.6; "
                        "the MoE models are not supported yet)");
}

TEST(GgufBadFiles, MissingTensorIsNamedWithItsHfNameAndShape) {
  test::TempDir tmp;
  std::string bytes = fixture_bytes(kBf16);
  // Layer 0's in_proj_qkv renamed into layer 3 (full attention): one missing, one unexpected.
  const size_t at = test::gguf_tensor_info(bytes, "blk.0.attn_qkv.weight") - std::string("0.attn_qkv.weight").size();
  bytes[at] = '3';
  const auto status = test::open_changed_gguf(tmp, bytes);
  EXPECT_ERROR_CONTAINS(status, "missing tensor \"model.layers.0.linear_attn.in_proj_qkv.weight\" (expected shape [160, 64])");
  EXPECT_ERROR_CONTAINS(status, "unexpected tensor \"model.layers.3.linear_attn.in_proj_qkv.weight\"");
}

TEST(GgufBadFiles, UnknownTensorNameIsAnError) {
  test::TempDir tmp;
  std::string bytes = fixture_bytes(kBf16);
  const size_t at = test::gguf_tensor_info(bytes, "blk.0.ffn_up.weight") - std::string("up.weight").size();
  bytes.replace(at, 2, "uq");
  EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes), "unexpected tensor \"blk.0.ffn_uq.weight\"");
}

TEST(GgufBadFiles, WrongShapeNamesExpectedAndFound) {
  test::TempDir tmp;
  std::string bytes = fixture_bytes(kBf16);
  const size_t info = test::gguf_tensor_info(bytes, "blk.0.ffn_up.weight");
  uint64_t ne[2];
  std::memcpy(ne, bytes.data() + info + 4, 16);
  std::swap(ne[0], ne[1]);  // same bytes, transposed shape
  std::memcpy(bytes.data() + info + 4, ne, 16);
  EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes),
                        "tensor \"model.layers.0.mlp.up_proj.weight\": expected shape [160, 64], found [64, 160]");
}

TEST(GgufBadFiles, UnsupportedTypeNamesTheTensorAndTheType) {
  test::TempDir tmp;
  std::string bytes = fixture_bytes(kBf16);
  const size_t info = test::gguf_tensor_info(bytes, "blk.0.ffn_up.weight");
  const uint32_t i16 = 25;  // 2 bytes per value like BF16, so the layout stays valid
  std::memcpy(bytes.data() + info + 4 + 16, &i16, 4);
  EXPECT_ERROR_CONTAINS(test::open_changed_gguf(tmp, bytes),
                        "tensor \"blk.0.ffn_up.weight\" (model.layers.0.mlp.up_proj.weight): ggml type I16 is not supported "
                        "yet (supported: F32, F16, BF16, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS)");
}

// --- split sets ---

void copy_parts(const test::TempDir& tmp) {
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "c_bf16_untied-Q8_0-0000" + std::to_string(i) + "-of-00003.gguf";
    fs::copy_file(kGgufDir / name, tmp.path() / name);
  }
}

// Part names as llama.cpp writes them: STEM-0000i-of-0000N.gguf, five digits each.
TEST(GgufSplitSet, PartNamesAreParsedExactly) {
  const auto part = parse_split_name("Qwen3.6-27B-Q4_K_M-00002-of-00003.gguf");
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->stem, "Qwen3.6-27B-Q4_K_M");
  EXPECT_EQ(part->index, 2);
  EXPECT_EQ(part->count, 3);
  EXPECT_EQ(parse_split_name("-00001-of-00001.gguf")->stem, "");
  for (const char* other : {"model.gguf", "m-0001-of-00003.gguf", "m-00001-of-0003.gguf", "m-00001_of-00003.gguf",
                            "m-0000a-of-00003.gguf", "m-00001-of-00003.bin", "00001-of-00003.gguf"})
    EXPECT_FALSE(parse_split_name(other).has_value()) << other;
}

TEST(GgufSplitSet, LoadsAsOneModelFromAnyPart) {
  test::TempDir tmp;
  copy_parts(tmp);
  auto set = GgufSet::open(tmp / "c_bf16_untied-Q8_0-00002-of-00003.gguf");
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->parts().size(), 3u);
  EXPECT_EQ(set->tensors().size(), 56u);
}

TEST(GgufSplitSet, MissingPartIsNamed) {
  test::TempDir tmp;
  copy_parts(tmp);
  fs::remove(tmp.path() / "c_bf16_untied-Q8_0-00002-of-00003.gguf");
  EXPECT_ERROR_CONTAINS(GgufSet::open(tmp / "c_bf16_untied-Q8_0-00001-of-00003.gguf"),
                        "split set c_bf16_untied-Q8_0-00001-of-00003.gguf: part 2 of 3 (");
}

TEST(GgufSplitSet, ForeignPartIsNamed) {
  test::TempDir tmp;
  copy_parts(tmp);
  fs::copy_file(kBf16, tmp.path() / "c_bf16_untied-Q8_0-00002-of-00003.gguf", fs::copy_options::overwrite_existing);
  EXPECT_ERROR_CONTAINS(GgufSet::open(tmp / "c_bf16_untied-Q8_0-00001-of-00003.gguf"),
                        "c_bf16_untied-Q8_0-00002-of-00003.gguf: expected part 2 of 3 (split.no 1, split.count 3), found "
                        "split.no -1, split.count -1 (a part of another set?)");
}

TEST(GgufSplitSet, RenamedPartIsAnError) {
  test::TempDir tmp;
  fs::copy_file(kGgufDir / "c_bf16_untied-Q8_0-00001-of-00003.gguf", tmp.path() / "renamed.gguf");
  EXPECT_ERROR_CONTAINS(GgufSet::open(tmp / "renamed.gguf"),
                        "renamed.gguf: this file is one part of a 3-part split set (split.count), but its name does not say "
                        "which part (expected a name ending in -00001-of-00003.gguf)");
}

}  // namespace
}  // namespace ds
