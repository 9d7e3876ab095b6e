// Logit comparisons of the model tests (model_logits.h).
#include "model_logits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_backend.h"
#include "model/sequence_runner.h"

namespace ds::test {

std::vector<std::unique_ptr<Backend>> logit_backends() {
  std::vector<std::unique_ptr<Backend>> out;
  out.push_back(std::make_unique<RefBackend>());
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::amx})
    if (detect_isa() >= isa) out.push_back(std::make_unique<CpuBackend>(isa, 2));
  return out;
}

std::vector<float> all_logits(Qwen35Model& model, const std::vector<int32_t>& ids) {
  SequenceRunner runner(model, static_cast<int64_t>(ids.size()), static_cast<int64_t>(ids.size()));
  std::vector<float> logits;
  EXPECT_TRUE(runner.feed(ids, LogitsRows::all, logits).ok());
  return logits;
}

double worst_error(const std::vector<float>& ours, const std::vector<float>& ref, int64_t vocab) {
  double worst = 0;
  for (size_t r = 0; r < ref.size(); r += static_cast<size_t>(vocab)) {
    double max_ref = 0, max_diff = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      max_ref = std::max(max_ref, double(std::fabs(ref[r + i])));
      max_diff = std::max(max_diff, double(std::fabs(ours[r + i] - ref[r + i])));
    }
    worst = std::max(worst, max_diff / max_ref);
  }
  return worst;
}

}  // namespace ds::test
