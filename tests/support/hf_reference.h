// What the HF reference fixtures (tests/fixtures, made by tools/reference) recorded, how logits are
// compared with it (error = per position max |ours − ref| ÷ max |ref|, the worst position counts;
// argmax agreement overall and where the reference's top-2 margin is decisive).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace ds::test {

struct HfPrompt {
  std::vector<int32_t> ids;
  std::vector<float> logits;          // [n, vocab] HF fp32
  std::vector<float> logits_hf_bf16;  // [n, vocab] HF bf16 (where recorded)
  std::vector<int32_t> greedy;        // new tokens (where recorded)
};

// prompt<k>.* of DIR/reference.safetensors, k = 0, 1, ...
std::vector<HfPrompt> read_hf_prompts(const std::filesystem::path& dir);

// The fixtures under `root` whose reference.safetensors records text prompts (prompt0.input_ids),
// sorted: every text model's oracle. The vision fixture records images instead (tests/vision reads it).
std::vector<std::filesystem::path> text_fixture_dirs(const std::filesystem::path& root);

struct LogitComparison {
  double max_error = 0;   // worst position
  int64_t checked = 0;    // positions whose reference top-2 margin is decisive
  int64_t agree = 0;      // of those, argmax equal
  int64_t agree_all = 0;  // argmax equal at any position
  int64_t positions = 0;
};

// Decisive: top-2 margin > margin_fraction · max |ref| of the position.
LogitComparison compare_logits(std::span<const float> ours, std::span<const float> ref, int64_t vocab,
                               double margin_fraction);

}  // namespace ds::test
