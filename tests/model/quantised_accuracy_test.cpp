// The accuracy table of quantised weights on a full-size checkpoint (docs/gguf.md): an opt-in
// measurement, not part of the suite (model_tests_FILTER leaves it out; it needs a 2B checkpoint and
// minutes). Each candidate — `int8`, `q4_k` (the reference checkpoint with --weights int8 / q4_k) or a
// GGUF file made from the same checkpoint — is scored against the reference's native weights in fast
// mode, teacher-forced, the way llama.cpp's `llama-perplexity --kl-divergence` scores a file: the
// tokens in chunks of DS_ACCURACY_CONTEXT, each chunk a fresh sequence, KL and top-1 over the second
// half of each chunk.
//   DS_ACCURACY_MODEL=models/qwen3.5-2b-random DS_ACCURACY_CANDIDATES=int8,q4_k,x-Q4_K_M.gguf
//   build/tests/model_tests --gtest_filter='QuantisedAccuracy.*'
// DS_ACCURACY_TOKENS=ids.txt (comma-separated) gives the tokens, else 2,048 seeded random ids;
// DS_ACCURACY_CONTEXT the chunk (512).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/formats/q4_k/q4_k.h"
#include "kernels/formats/q5_k/q5_k.h"
#include "kernels/formats/q6_k/q6_k.h"
#include "model/model_loader.h"
#include "util/random.h"
#include "util/thread_pool.h"
#include "weights_agreement.h"

namespace ds {
namespace {

std::vector<int32_t> accuracy_tokens(int64_t vocab) {
  std::vector<int32_t> tokens;
  if (const char* path = std::getenv("DS_ACCURACY_TOKENS")) {
    std::ifstream in(path);
    std::string item;
    while (std::getline(in, item, ',')) tokens.push_back(std::stoi(item));
    return tokens;
  }
  Xoshiro256 rng(2026);
  tokens.resize(2048);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(vocab));
  return tokens;
}

// Logits of the second half of each chunk, chunks scored as fresh sequences.
std::vector<float> scored_logits(Qwen35Model& model, const std::vector<int32_t>& tokens, int64_t context, int64_t vocab) {
  std::vector<float> scored;
  for (size_t at = 0; at + static_cast<size_t>(context) <= tokens.size(); at += static_cast<size_t>(context)) {
    const std::vector<int32_t> chunk(tokens.begin() + static_cast<int64_t>(at), tokens.begin() + static_cast<int64_t>(at) + context);
    const std::vector<float> logits = test::all_logits(model, chunk);
    scored.insert(scored.end(), logits.begin() + context / 2 * vocab, logits.end());
  }
  return scored;
}

TEST(QuantisedAccuracy, TableOnAFullSizeCheckpoint) {
  const char* dir = std::getenv("DS_ACCURACY_MODEL");
  const char* candidates = std::getenv("DS_ACCURACY_CANDIDATES");
  if (dir == nullptr || candidates == nullptr)
    GTEST_SKIP() << "an opt-in measurement: set DS_ACCURACY_MODEL and DS_ACCURACY_CANDIDATES (see the file's header)";
  const int64_t context = std::getenv("DS_ACCURACY_CONTEXT") ? std::atoll(std::getenv("DS_ACCURACY_CONTEXT")) : 512;
  CpuBackend backend(detect_isa(), physical_cores());
  std::vector<float> reference;
  std::vector<int32_t> tokens;
  int64_t vocab = 0;
  {
    auto native = load_model(dir, backend, ComputeMode::fast);
    ASSERT_TRUE(native.ok()) << native.status().message();
    vocab = native->config.text.vocab_size;
    tokens = accuracy_tokens(vocab);
    reference = scored_logits(*native->model, tokens, context, vocab);
  }
  std::stringstream names(candidates);
  std::string name;
  while (std::getline(names, name, ',')) {
    const bool file = name.ends_with(".gguf");
    const WeightsChoice choice = name == "int8" ? WeightsChoice::int8 : name == "q4_k" ? WeightsChoice::q4_k : WeightsChoice::native;
    ASSERT_TRUE(file || choice != WeightsChoice::native) << "unknown candidate " << name;
    auto loaded = load_model(file ? name : std::string(dir), backend, ComputeMode::fast, choice, physical_cores());
    ASSERT_TRUE(loaded.ok()) << name << ": " << loaded.status().message();
    test::Agreement agreement;
    agreement.add(reference, scored_logits(*loaded->model, tokens, context, vocab), vocab);
    std::cout << "accuracy | " << name << " | " << loaded->matmul_bytes << " matmul bytes | mean KL " << agreement.mean_kl()
              << " | top-1 " << agreement.top1() << " | decisive " << agreement.decisive_agree << "/" << agreement.decisive
              << " | " << agreement.positions << " positions, context " << context << "\n";
  }
}

}  // namespace
}  // namespace ds

namespace ds {
namespace {

// deltaserve's own quantisers (`--weights q4_k`, its GGUF writer) against llama.cpp's on the same
// weights: for every Q4_K / Q5_K / Q6_K tensor of a GGUF that llama.cpp quantised from the checkpoint
// DS_ACCURACY_MODEL, the relative RMS error (‖ŵ − w‖ / ‖w‖) of llama.cpp's blocks and of ours made from
// the original rows, summed over the tensors of each type. Opt-in like the table above:
//   DS_ACCURACY_MODEL=models/qwen3.5-2b-random DS_ACCURACY_GGUF=x-Q4_K_M.gguf
//   build/tests/model_tests --gtest_filter='QuantisedAccuracy.Quantisers*'
TEST(QuantisedAccuracy, QuantisersAgainstLlamaCppsOnTheSameWeights) {
  const char* dir = std::getenv("DS_ACCURACY_MODEL");
  const char* gguf_path = std::getenv("DS_ACCURACY_GGUF");
  if (dir == nullptr || gguf_path == nullptr)
    GTEST_SKIP() << "an opt-in measurement: set DS_ACCURACY_MODEL and DS_ACCURACY_GGUF (see above)";
  auto original = open_checkpoint(dir);
  auto gguf = open_checkpoint(gguf_path);
  ASSERT_TRUE(original.ok() && gguf.ok());
  const std::string prefix = original->second->contains("model.language_model.embed_tokens.weight") ? "model.language_model." : "model.";
  struct Sums {
    double theirs = 0, ours = 0, energy = 0;
    int64_t tensors = 0;
  };
  std::map<std::string, Sums> by_type;
  for (const auto& [name, view] : gguf->second->tensors()) {
    const WeightFormat& format = format_of(view);
    const KquantType* type = view.format == WeightFormatId::q4_k   ? &q4_k_type()
                             : view.format == WeightFormatId::q5_k ? &q5_k_type()
                             : view.format == WeightFormatId::q6_k ? &q6_k_type()
                                                                   : nullptr;
    if (type == nullptr || !gguf->second->column_heads(name).empty()) continue;  // reordered columns: skip
    const std::string hf = name.starts_with("model.") ? prefix + name.substr(6) : name;
    const TensorView* source = original->second->find(hf);
    if (source == nullptr || source->shape != view.shape) continue;  // e.g. rows reordered with the value heads
    const int64_t rows = view.shape[0], cols = view.shape[1];
    std::vector<float> w(cols), theirs(cols), ours(cols), block_values(kSuperblock);  // [cols] one row each
    std::vector<std::byte> block(static_cast<size_t>(type->block_bytes()));
    Sums& sums = by_type[type->name()];
    for (int64_t r = 0; r < rows; ++r) {
      format_of(*source).dequantize_row(*source, r, w.data());
      format.dequantize_row(view, r, theirs.data());
      for (int64_t b = 0; b < cols / kSuperblock; ++b) {
        type->quantize(w.data() + b * kSuperblock, block.data());
        type->dequantize(block.data(), ours.data() + b * kSuperblock);
      }
      for (int64_t c = 0; c < cols; ++c) {
        sums.theirs += (theirs[c] - w[c]) * (theirs[c] - w[c]);
        sums.ours += (ours[c] - w[c]) * (ours[c] - w[c]);
        sums.energy += w[c] * w[c];
      }
    }
    ++sums.tensors;
  }
  for (const auto& [type, sums] : by_type)
    std::cout << "quantiser | " << type << " | " << sums.tensors << " tensors | relative RMS error: llama.cpp "
              << std::sqrt(sums.theirs / sums.energy) << ", deltaserve " << std::sqrt(sums.ours / sums.energy) << "\n";
}

}  // namespace
}  // namespace ds
