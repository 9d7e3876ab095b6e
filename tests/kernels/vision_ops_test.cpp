// The vision tower's ops on the CPU builds (AVX2, AVX-512; 1 and 2 threads) against the reference
// (ref/vision_ops.cpp), on odd sizes with tails. They are not bit-identical (partial sums in lanes,
// an online softmax over key blocks, GELU through portable_exp and an erfc fit), so each comparison
// states its bound; add_bias is the same arithmetic and is compared bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "isa_test.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_backend.h"
#include "test_util.h"

namespace ds::vision_ops_test {
namespace {

std::vector<float> random_vector(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  return test::random_floats(n, seed, lo, hi);
}

TensorView f32_view(const char* name, const std::vector<float>& values) {
  return TensorView{name, DType::F32, {static_cast<int64_t>(values.size())},
                    reinterpret_cast<const std::byte*>(values.data()), values.size() * 4};
}

// max |a − b| ÷ max(1, |b|), element by element.
double worst_error(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < b.size(); ++i)
    worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])) / std::max(1.0, std::fabs(double(b[i]))));
  return worst;
}

class CpuVisionOps : public test::IsaTest {
 protected:
  std::vector<std::unique_ptr<Backend>> cpu_backends() const {
    std::vector<std::unique_ptr<Backend>> backends;
    for (int threads : {1, 2}) backends.push_back(std::make_unique<CpuBackend>(GetParam(), threads));
    return backends;
  }
  RefBackend ref_;
};

// Rows offset from zero (mean ≈ 3) so the mean matters; 41 × 1037 floats crosses the threading threshold.
TEST_P(CpuVisionOps, LayerNormWithin2e6AndBiasBitIdentical) {
  for (const int64_t rows : {1, 5, 41}) {
    const int64_t dim = 1037;
    const auto x = random_vector(static_cast<size_t>(rows * dim), 1, 2.0f, 4.0f);
    const auto weight = random_vector(static_cast<size_t>(dim), 2), bias = random_vector(static_cast<size_t>(dim), 3);
    const TensorView w = f32_view("w", weight), b = f32_view("b", bias);
    std::vector<float> expected(x.size()), expected_biased = x;
    ref_.layer_norm(x.data(), rows, dim, w, b, 1e-6f, expected.data());
    ref_.add_bias(expected_biased.data(), rows, dim, b);
    for (const auto& backend : cpu_backends()) {
      std::vector<float> out(x.size()), biased = x;
      backend->layer_norm(x.data(), rows, dim, w, b, 1e-6f, out.data());
      backend->add_bias(biased.data(), rows, dim, b);
      const double error = worst_error(out, expected);
      std::printf("%s, %lld rows: layer_norm %.2e from the reference\n", backend->name(), static_cast<long long>(rows), error);
      EXPECT_LE(error, 2e-6) << backend->name();
      EXPECT_EQ(biased, expected_biased) << backend->name();
    }
  }
}

// Both GELUs over [−12, 12] (both tails and the kink), 20,011 elements: within 1e-6 ·
// max(1, |reference|) of the reference; the erf form also within that of GELU in double (the
// reference's fp32 1 + erf cancels in the negative tail, ours does not).
TEST_P(CpuVisionOps, GeluTanhAndErfWithin1e6) {
  const auto x = random_vector(20011, 4, -12.0f, 12.0f);
  for (const Backend::Gelu kind : {Backend::Gelu::tanh, Backend::Gelu::erf}) {
    std::vector<float> expected = x;
    ref_.gelu(expected.data(), static_cast<int64_t>(expected.size()), kind);
    std::vector<float> exact(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      exact[i] = static_cast<float>(kind == Backend::Gelu::erf ? 0.5 * v * std::erfc(-v / std::sqrt(2.0))
                                                               : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
    }
    for (const auto& backend : cpu_backends()) {
      std::vector<float> out = x;
      backend->gelu(out.data(), static_cast<int64_t>(out.size()), kind);
      const double error = worst_error(out, expected), exact_error = worst_error(out, exact);
      std::printf("%s: gelu %s %.2e from the reference, %.2e from double\n", backend->name(),
                  kind == Backend::Gelu::erf ? "erf" : "tanh", error, exact_error);
      EXPECT_LE(error, 1e-6) << backend->name();
      EXPECT_LE(exact_error, 1e-6) << backend->name();
    }
  }
}

// Lengths around the query tile (32) and key block (64): 1, 31, 33, 130; 1 and 3 heads; head sizes
// 20 and 64. Scores spread over ±8 so the softmax is peaked and the running max moves between key
// blocks. Bound: 2e-6 of max |reference|.
TEST_P(CpuVisionOps, BidirectionalAttentionWithin2e6) {
  for (const int64_t n : {1, 31, 33, 130})
    for (const int64_t heads : {1, 3})
      for (const int64_t head_dim : {20, 64}) {
        const auto count = static_cast<size_t>(n * heads * head_dim);
        const auto q = random_vector(count, 5, -2.0f, 2.0f), k = random_vector(count, 6, -2.0f, 2.0f);
        const auto v = random_vector(count, 7);
        const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
        std::vector<float> expected(count);
        ref_.attention_bidirectional(q.data(), k.data(), v.data(), n, heads, head_dim, scale, expected.data(), false);
        double max_ref = 0;
        for (float e : expected) max_ref = std::max(max_ref, std::fabs(double(e)));
        for (const auto& backend : cpu_backends()) {
          std::vector<float> out(count, NAN);
          backend->attention_bidirectional(q.data(), k.data(), v.data(), n, heads, head_dim, scale, out.data(), false);
          double worst = 0;
          for (size_t i = 0; i < count; ++i) worst = std::max(worst, std::fabs(double(out[i]) - double(expected[i])));
          EXPECT_LE(worst / max_ref, 2e-6) << backend->name() << ", n " << n << ", heads " << heads << ", head_dim "
                                           << head_dim;
        }
      }
}

// The fast-mode form (backend.h) against the reference's, on lengths past one query tile and
// several key blocks, odd (33, 147) and not a multiple of the 16-key vectors, 1 and 3 heads, head
// sizes 19 (an odd one: a last pair with a zero half), 64 and 72 (a value slice of 4 vectors and
// one of 1), 1 and 2 threads. The AVX-512 BF16 kernel rounds each weight against the running max of
// the key blocks seen so far, the reference against the final max, so:
// - where the first key block holds every row's max (`dominant`: key 0 scores D/4 · scale by
//   construction, above any other key's ≤ (D − 1)/4 · scale), the weights, the scores and the
//   weighted sums of V are the same bits; only the total's fp32 sum runs in another order,
//   ≤ n · 2⁻²⁴ relative: bound 1e-5 of max |reference|;
// - otherwise (scores over ±8, the max moving between blocks) each weight's rounding may differ
//   by one bf16 step relative to the other weights, ≤ 2⁻⁸ of a weight: the outputs, convex sums of
//   V, move by ≤ 2⁻⁸ · (max V − min V) (+ 1e-5 · max |reference| for the fp32 sums).
// The AVX2 build computes the f32 form in fast mode (backend.h allows it): the same bits as its f32 call.
TEST_P(CpuVisionOps, BidirectionalAttentionBf16AgainstTheFastReference) {
  for (const bool dominant : {true, false})
    for (const int64_t n : {1, 33, 130, 147})
      for (const int64_t heads : {1, 3})
        for (const int64_t head_dim : {19, 64, 72}) {
          const auto count = static_cast<size_t>(n * heads * head_dim);
          auto q = random_vector(count, 8, dominant ? -0.5f : -2.0f, dominant ? 0.5f : 2.0f);
          auto k = random_vector(count, 9, dominant ? -0.5f : -2.0f, dominant ? 0.5f : 2.0f);
          const auto v = random_vector(count, 10);
          if (dominant)
            for (int64_t h = 0; h < heads; ++h) {
              const float big = 0.5f * std::sqrt(static_cast<float>(head_dim));  // q[0] · k[0] = D / 4
              for (int64_t i = 0; i < n; ++i) q[static_cast<size_t>((i * heads + h) * head_dim)] = big;
              for (int64_t j = 0; j < n; ++j) k[static_cast<size_t>((j * heads + h) * head_dim)] = j == 0 ? big : 0.0f;
              for (int64_t d = 1; d < head_dim; ++d) k[static_cast<size_t>(h * head_dim + d)] = 0.0f;
            }
          const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
          std::vector<float> expected(count);
          ref_.attention_bidirectional(q.data(), k.data(), v.data(), n, heads, head_dim, scale, expected.data(), true);
          double max_ref = 0, v_range = 0;
          for (float e : expected) max_ref = std::max(max_ref, std::fabs(double(e)));
          const auto [v_min, v_max] = std::minmax_element(v.begin(), v.end());
          v_range = double(*v_max) - double(*v_min);
          const double bound = dominant ? 1e-5 * max_ref : std::ldexp(1.0, -8) * v_range + 1e-5 * max_ref;
          for (const auto& backend : cpu_backends()) {
            std::vector<float> out(count, NAN);
            backend->attention_bidirectional(q.data(), k.data(), v.data(), n, heads, head_dim, scale, out.data(), true);
            const std::string where = std::string(backend->name()) + ", n " + std::to_string(n) + ", heads " +
                                      std::to_string(heads) + ", head_dim " + std::to_string(head_dim) +
                                      (dominant ? ", max in the first block" : ", max moving");
            if (GetParam() == Isa::avx2) {
              std::vector<float> f32(count, NAN);
              backend->attention_bidirectional(q.data(), k.data(), v.data(), n, heads, head_dim, scale, f32.data(), false);
              EXPECT_EQ(out, f32) << where;
              continue;
            }
            double worst = 0;
            for (size_t i = 0; i < count; ++i) worst = std::max(worst, std::fabs(double(out[i]) - double(expected[i])));
            if (n == 147 && heads == 3) std::printf("%s: %.2e (bound %.2e)\n", where.c_str(), worst, bound);
            EXPECT_LE(worst, bound) << where;
          }
        }
}

INSTANTIATE_TEST_SUITE_P(Isas, CpuVisionOps, ::testing::Values(Isa::avx2, Isa::avx512), test::isa_param_name);

}  // namespace
}  // namespace ds::vision_ops_test
