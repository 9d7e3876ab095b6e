// TimedBackend (bench --op-times): results are the wrapped backend's, bit for bit, and each op counts
// under the phase of the step it ran in.
#include "kernels/timed_backend.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/ref/ref_backend.h"

namespace ds {
namespace {

TEST(TimedBackend, ForwardsEachOpAndCountsItUnderItsStep) {
  RefBackend ref;
  TimedBackend timed(ref);
  const int64_t n = 3, k = 5;
  std::vector<float> w_values(n * k), x(2 * k), norm_w(k, 0.5f);
  for (size_t i = 0; i < w_values.size(); ++i) w_values[i] = 0.25f * static_cast<float>(i) - 1.0f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f - 0.125f * static_cast<float>(i);
  const TensorView w{"w", DType::F32, {n, k}, reinterpret_cast<const std::byte*>(w_values.data()), 4 * w_values.size()};
  const TensorView nw{"norm", DType::F32, {k}, reinterpret_cast<const std::byte*>(norm_w.data()), 4 * norm_w.size()};

  std::vector<float> want(2 * n), got(2 * n), want_norm(2 * k), got_norm(2 * k);
  ref.matmul(x.data(), 2, w, want.data(), false);
  ref.rms_norm(x.data(), 2, k, nw, 1e-6f, want_norm.data());
  timed.begin_step("prefill");
  timed.matmul(x.data(), 2, w, got.data(), false);
  timed.begin_step("decode");
  timed.rms_norm(x.data(), 2, k, nw, 1e-6f, got_norm.data());
  timed.begin_step("decode");
  timed.rms_norm(x.data(), 2, k, nw, 1e-6f, got_norm.data());
  EXPECT_EQ(0, std::memcmp(want.data(), got.data(), 4 * want.size()));
  EXPECT_EQ(0, std::memcmp(want_norm.data(), got_norm.data(), 4 * want_norm.size()));

  const auto& phases = timed.phases();
  ASSERT_TRUE(phases.count("prefill") && phases.count("decode"));
  const TimedBackend::Phase& prefill = phases.at("prefill");
  const TimedBackend::Phase& decode = phases.at("decode");
  EXPECT_EQ(prefill.steps, 1);
  EXPECT_EQ(decode.steps, 2);
  ASSERT_EQ(prefill.ops.size(), 1u);
  EXPECT_EQ(prefill.ops.begin()->first.rfind("matmul ", 0), 0u) << prefill.ops.begin()->first;  // by the weight's format
  EXPECT_EQ(prefill.ops.begin()->second.calls, 1);
  ASSERT_EQ(decode.ops.size(), 1u);
  EXPECT_EQ(decode.ops.at("rms_norm").calls, 2);
  EXPECT_EQ(std::string(timed.name()), std::string(ref.name()));
}

}  // namespace
}  // namespace ds
