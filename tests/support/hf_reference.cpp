#include "hf_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/sampler.h"
#include "io/safetensors_checkpoint.h"

namespace ds::test {

namespace {

template <typename T, typename Out>
std::vector<Out> read_tensor(const SafetensorsCheckpoint& file, const std::string& name) {
  const TensorView* view = file.find(name);
  if (view == nullptr) return {};
  std::vector<T> raw(view->numel());
  std::memcpy(raw.data(), view->data, view->nbytes);
  return std::vector<Out>(raw.begin(), raw.end());
}

}  // namespace

std::vector<HfPrompt> read_hf_prompts(const std::filesystem::path& dir) {
  auto file = SafetensorsCheckpoint::open_file((dir / "reference.safetensors").string());
  EXPECT_TRUE(file.ok()) << file.status().message();
  std::vector<HfPrompt> prompts;
  for (int k = 0; file.ok() && file->contains("prompt" + std::to_string(k) + ".input_ids"); ++k) {
    const std::string p = "prompt" + std::to_string(k) + ".";
    prompts.push_back({read_tensor<int64_t, int32_t>(*file, p + "input_ids"), read_tensor<float, float>(*file, p + "logits"),
                       read_tensor<float, float>(*file, p + "logits_hf_bf16"), read_tensor<int64_t, int32_t>(*file, p + "greedy")});
  }
  return prompts;
}

std::vector<std::filesystem::path> text_fixture_dirs(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!std::filesystem::exists(entry.path() / "reference.safetensors")) continue;
    auto file = SafetensorsCheckpoint::open_file((entry.path() / "reference.safetensors").string());
    if (file.ok() && file->contains("prompt0.input_ids")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

LogitComparison compare_logits(std::span<const float> ours, std::span<const float> ref, int64_t vocab,
                               double margin_fraction) {
  LogitComparison c;
  for (size_t r = 0; r < ref.size(); r += static_cast<size_t>(vocab)) {
    double max_ref = 0, max_diff = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      max_ref = std::max(max_ref, double(std::fabs(ref[r + i])));
      max_diff = std::max(max_diff, double(std::fabs(ours[r + i] - ref[r + i])));
    }
    c.max_error = std::max(c.max_error, max_diff / max_ref);
    const auto ref_row = ref.subspan(r, vocab), our_row = ours.subspan(r, vocab);
    const int32_t best = argmax(ref_row);
    float second = -INFINITY;
    for (int64_t i = 0; i < vocab; ++i)
      if (i != best) second = std::max(second, ref_row[i]);
    const bool same = argmax(our_row) == best;
    c.positions += 1;
    c.agree_all += same;
    if (ref_row[best] - second > margin_fraction * max_ref) {
      c.checked += 1;
      c.agree += same;
    }
  }
  return c;
}

}  // namespace ds::test
