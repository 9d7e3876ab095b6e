// Conv and element-wise ops: the CPU builds (AVX2, AVX-512; 1 and 2 threads) are bit-identical to
// the reference, on odd sizes with tails and a cached conv state (attention: attention_test.cpp).
// The scalar ISA runs the reference itself, so it has nothing to compare.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "isa_test.h"
#include "kernels/ref/ref_backend.h"
#include "kernels/weight_access.h"
#include "test_util.h"
#include "util/random.h"

namespace ds::mixer_test {
namespace {

std::vector<float> random_vector(size_t n, uint64_t seed) { return test::random_floats(n, seed, -1.0f, 1.0f); }

class CpuMixer : public test::IsaTest {
 protected:
  std::vector<std::unique_ptr<Backend>> cpu_backends() const {
    std::vector<std::unique_ptr<Backend>> backends;
    for (int threads : {1, 2}) backends.push_back(std::make_unique<CpuBackend>(GetParam(), threads));
    return backends;
  }
};

TEST_P(CpuMixer, ConvIsBitIdenticalToReference) {
  const int64_t channels = 70, kernel = 4, n = 9;
  const auto taps = random_vector(kernel * channels, 1);  // [K, channels]
  const auto x = random_vector(n * channels, 2);
  const auto initial_state = random_vector((kernel - 1) * channels, 3);
  RefBackend ref;
  // In place, or moving the state to another array at each call (a speculative verify's form: the
  // array read must stay as it was).
  auto run = [&](Backend& backend, bool moving) {
    std::vector<float> state = initial_state, out(n * channels), out2(channels);
    std::vector<float> next(state.size(), -7.0f);
    backend.causal_conv1d_silu(x.data(), n, channels, taps.data(), kernel, state.data(), moving ? next.data() : state.data(),
                               out.data());
    if (moving) {
      EXPECT_EQ(state, initial_state) << backend.name() << ": the state read was written";
      state.swap(next);
    }
    backend.causal_conv1d_silu(x.data(), 1, channels, taps.data(), kernel, state.data(), state.data(), out2.data());  // continues it
    out.insert(out.end(), out2.begin(), out2.end());
    out.insert(out.end(), state.begin(), state.end());
    return out;
  };
  const auto expected = run(ref, false);
  EXPECT_EQ(run(ref, true), expected);
  for (const auto& backend : cpu_backends())
    for (bool moving : {false, true}) EXPECT_EQ(run(*backend, moving), expected) << backend->name() << " moving " << moving;
}

// The model transposes each checkpoint conv1d [channels, 1, K] once at load into the kernels' taps
// [K, channels] fp32: every element lands at its place, converted from the stored dtype.
TEST(ConvTaps, TransposeTheCheckpointWeight) {
  const int64_t channels = 5, kernel = 4;
  std::vector<uint16_t> bits(static_cast<size_t>(channels * kernel));  // [channels, 1, K] bf16
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = float_to_bf16(0.25f * static_cast<float>(i) - 1.0f);
  const TensorView w{"conv1d", DType::BF16, {channels, 1, kernel}, reinterpret_cast<const std::byte*>(bits.data()),
                     bits.size() * 2};
  const std::vector<float> taps = conv_taps(w);
  ASSERT_EQ(taps.size(), bits.size());
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t j = 0; j < kernel; ++j)
      EXPECT_EQ(taps[static_cast<size_t>(j * channels + c)], 0.25f * static_cast<float>(c * kernel + j) - 1.0f) << c << " " << j;
  const TensorView flat{"conv1d", DType::BF16, {channels, kernel}, w.data, w.nbytes};
  EXPECT_DEATH(conv_taps(flat), "expected \\[channels, 1, K\\]");
}

TEST_P(CpuMixer, NormsActivationsAndRopeAreBitIdenticalToReference) {
  RefBackend ref;
  for (const int64_t rows : {1, 3, 40}) {  // 40 × 1000 floats crosses the threading threshold
    const int64_t dim = 1000, n = rows * dim;
    const auto x = random_vector(n, 7), z = random_vector(n, 8), y = random_vector(n, 9);
    auto weights = random_vector(dim, 10);
    const TensorView w{"w", DType::F32, {dim}, reinterpret_cast<const std::byte*>(weights.data()), weights.size() * 4};
    const int64_t half = 8, heads = rows, head_dim = dim / rows / 2 * 2;  // rope over [1, heads, head_dim]
    const auto cos = random_vector(half, 11), sin = random_vector(half, 12);
    const RopeAngles angles{cos.data(), sin.data(), half};
    auto run = [&](Backend& b) {
      std::vector<float> out(6 * n), tmp = x;
      b.rms_norm(x.data(), rows, dim, w, 1e-6f, out.data());
      b.rms_norm_gated(x.data(), z.data(), rows, dim, w, 1e-6f, out.data() + n);
      b.silu_mul(x.data(), z.data(), n, out.data() + 2 * n);
      b.sigmoid_gate(tmp.data(), z.data(), n);
      std::copy(tmp.begin(), tmp.end(), out.begin() + 3 * n);
      tmp = x;
      b.add(tmp.data(), y.data(), n);
      std::copy(tmp.begin(), tmp.end(), out.begin() + 4 * n);
      tmp = x;
      b.rope(tmp.data(), 1, heads, head_dim, angles);
      std::copy(tmp.begin(), tmp.end(), out.begin() + 5 * n);
      return out;
    };
    const auto expected = run(ref);
    for (const auto& backend : cpu_backends()) EXPECT_EQ(run(*backend), expected) << backend->name() << " rows " << rows;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, CpuMixer, ::testing::Values(Isa::avx2, Isa::avx512), test::isa_param_name);

}  // namespace
}  // namespace ds::mixer_test
