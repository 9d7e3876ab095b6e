// Logits of the K-quant GGUF fixtures — g_kquant_shapes quantised by llama.cpp itself to Q4_K, Q5_K,
// Q6_K, IQ4_XS and its Q4_K_M recipe (tools/reference/make_gguf_kquant_fixtures.py) — against what
// llama.cpp computes on the same files (kquant_llamacpp_logits.safetensors):
//   logits_f32  llama.cpp in fp32 on an F32 copy of gguf-py's dequantisation: the quantised model in
//               exact arithmetic, the target both engines approximate;
//   logits      llama.cpp as its users run it (Q8_K activations, F16 KV cache, repacked kernels).
// Measured distances (per position max |a − b| ÷ max |b|, worst position over the prompts of 1, 64 and
// 211 tokens) are printed; the bounds below say where they come from.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "io/safetensors_checkpoint.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/model_loader.h"
#include "model_logits.h"

namespace ds::gguf_kquant_logits_test {
namespace {

namespace fs = std::filesystem;
const fs::path kGguf = fs::path(DS_FIXTURES_DIR) / "gguf";
const char* const kTypes[] = {"Q4_K", "Q5_K", "Q6_K", "IQ4_XS", "Q4_K_M"};
const int kPrompts[] = {0, 2, 4};  // 1, 64 and 211 tokens

const SafetensorsCheckpoint& llamacpp() {
  static const SafetensorsCheckpoint file = [] {
    auto opened = SafetensorsCheckpoint::open_file((kGguf / "kquant_llamacpp_logits.safetensors").string());
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    return std::move(opened).value();
  }();
  return file;
}

template <typename T>
std::vector<T> read(const std::string& name) {
  const TensorView* view = llamacpp().find(name);
  EXPECT_NE(view, nullptr) << name;
  std::vector<T> out(view ? view->nbytes / sizeof(T) : 0);
  if (view) std::memcpy(out.data(), view->data, view->nbytes);
  return out;
}

std::vector<int32_t> prompt_ids(int k) {
  const std::vector<int64_t> ids = read<int64_t>("prompt" + std::to_string(k) + ".input_ids");
  return {ids.begin(), ids.end()};
}

struct Distances {
  double to_exact = 0;     // ours vs logits_f32
  double to_llamacpp = 0;  // ours vs logits
  double llamacpp_to_exact = 0;
};

Distances measure(const std::string& type, Backend& backend, ComputeMode mode, WeightsChoice weights) {
  const std::string path = (kGguf / ("g_kquant_shapes-" + type + ".gguf")).string();
  auto loaded = load_model(path, backend, mode, weights, 2);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  Distances d;
  if (!loaded.ok()) return d;
  const int64_t vocab = loaded->config.text.vocab_size;
  for (int k : kPrompts) {
    const std::string p = type + ".prompt" + std::to_string(k) + ".";
    const std::vector<float> ours = test::all_logits(*loaded->model, prompt_ids(k));
    const std::vector<float> exact = read<float>(p + "logits_f32"), theirs = read<float>(p + "logits");
    d.to_exact = std::max(d.to_exact, test::worst_error(ours, exact, vocab));
    d.to_llamacpp = std::max(d.to_llamacpp, test::worst_error(ours, theirs, vocab));
    d.llamacpp_to_exact = std::max(d.llamacpp_to_exact, test::worst_error(theirs, exact, vocab));
  }
  return d;
}

// The blocks read in place in fp32 (`--weights mapped`, f32 mode: the reference matmul on the
// dequantised rows, fp32 activations) are the dequantised model: what llama.cpp's fp32 path gives on
// gguf-py's values, to fp32 rounding — the tensor mapping, the value heads' order (out_proj keeps
// the file's, the model permutes its input), the embedding gathered from its blocks, all exact.
TEST(GgufKquantLogits, BlocksInPlaceAreTheDequantisedModel) {
  CpuBackend backend(detect_isa(), 2);
  for (const char* type : kTypes) {
    const Distances d = measure(type, backend, ComputeMode::f32, WeightsChoice::mapped);
    std::cout << type << " mapped f32: to llama.cpp fp32 on the dequantised weights " << d.to_exact << "\n";
    EXPECT_LE(d.to_exact, 1e-4) << type;
  }
}

// The kernels (panels; activations quantised to int8 per 32 inputs) against the exact model, beside
// llama.cpp's own distance to it (its activations are Q8_K: one scale per 256 inputs). Bound: within
// llama.cpp's distance (ours quantises activations finer), with a floor of 1e-2 for files where
// llama.cpp lands unusually close. And the two engines' logits within the sum of their distances to
// the exact model plus 10% — the tolerance of comparing two approximations of the same thing.
TEST(GgufKquantLogits, KernelsStayAsCloseToTheExactModelAsLlamaCpp) {
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    if (detect_isa() < isa) {
      std::cout << "skipped " << isa_name(isa) << ": not on this CPU\n";
      continue;
    }
    CpuBackend backend(isa, 2);
    for (const char* type : kTypes) {
      const Distances d = measure(type, backend, ComputeMode::fast, WeightsChoice::native);
      std::cout << type << " " << isa_name(isa) << " panels: to the exact model " << d.to_exact << " (llama.cpp "
                << d.llamacpp_to_exact << "), to llama.cpp " << d.to_llamacpp << "\n";
      EXPECT_LE(d.to_exact, std::max(d.llamacpp_to_exact, 1e-2)) << type;
      EXPECT_LE(d.to_llamacpp, 1.1 * (d.to_exact + d.llamacpp_to_exact)) << type;
    }
  }
}

}  // namespace
}  // namespace ds::gguf_kquant_logits_test
