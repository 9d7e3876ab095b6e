// CPU matmul kernels (AVX-512 BF16, AVX-512 F, AVX2) against the scalar reference on odd sizes and
// tails, and the batch / thread independence every row's result must have.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/ref/ref_backend.h"
#include "util/float16.h"
#include "util/random.h"

namespace ds {
namespace {

struct Weights {
  std::vector<std::byte> bytes;
  std::vector<float> scales;  // int8 only
  TensorView view;
};

Weights make_weights(DType dtype, int64_t n, int64_t k, uint64_t seed) {
  Weights w;
  const size_t size = dtype_size(dtype);
  w.bytes.resize(static_cast<size_t>(n * k) * size + 2);  // +2: start the data at an odd address below
  std::byte* data = w.bytes.data() + (dtype == DType::F32 ? 0 : 2);
  Xoshiro256 rng(seed);
  for (int64_t i = 0; i < n * k; ++i) {
    const float value = rng.uniform() * 2.0f - 1.0f;
    if (dtype == DType::I8) data[i] = static_cast<std::byte>(static_cast<int8_t>(value * 127.0f));
    else if (dtype == DType::F32) std::memcpy(data + 4 * i, &value, 4);
    else {
      const uint16_t bits = dtype == DType::BF16 ? float_to_bf16(value) : float_to_fp16(value);
      std::memcpy(data + 2 * i, &bits, 2);
    }
  }
  w.view = TensorView{"w", dtype, {n, k}, data, static_cast<uint64_t>(n * k) * size};
  if (dtype == DType::I8) {  // odd k: tails cut through scale groups and 16-blocks
    const int64_t groups = (k + kInt8ScaleGroup - 1) / kInt8ScaleGroup;
    for (int64_t i = 0; i < n * groups; ++i) w.scales.push_back(0.01f + 0.001f * static_cast<float>(i % 97));
    w.view.scales = w.scales.data();
    w.view.scale_group = kInt8ScaleGroup;
  }
  return w;
}

std::vector<float> make_input(int64_t m, int64_t k, uint64_t seed) {
  Xoshiro256 rng(seed);
  std::vector<float> x(static_cast<size_t>(m * k));
  for (float& v : x) v = rng.uniform() * 4.0f - 2.0f;
  return x;
}

std::vector<Isa> available_isas() {
  std::vector<Isa> isas{Isa::scalar};
  if (detect_isa() >= Isa::avx2) isas.push_back(Isa::avx2);
  if (detect_isa() >= Isa::avx512) isas.push_back(Isa::avx512);
  return isas;
}

TEST(CpuMatmul, MatchesReferenceOnOddSizesForEveryIsaDtypeAndMode) {
  RefBackend ref;
  for (Isa isa : available_isas()) {
    CpuBackend cpu(isa, 2);
    for (DType dtype : {DType::BF16, DType::F16, DType::F32, DType::I8})
      for (bool fast : {false, true})
        for (int64_t m : {1, 3, 5, 67})
          for (int64_t k : {1, 15, 17, 31, 33, 100, 259})
            for (int64_t n : {1, 7, 19, 64}) {
              const Weights w = make_weights(dtype, n, k, 1000 * k + n);
              const auto x = make_input(m, k, m);
              std::vector<float> expected(m * n), actual(m * n);
              ref.matmul(x.data(), m, w.view, expected.data(), fast);
              cpu.matmul(x.data(), m, w.view, actual.data(), fast);
              for (int64_t i = 0; i < m * n; ++i) {
                // Only the summation order differs: bounded by k · ulp of the largest partial sum.
                const double bound = 1e-6 * k * 4.0 + 1e-6;
                ASSERT_NEAR(actual[i], expected[i], bound)
                    << isa_name(isa) << " " << dtype_name(dtype) << (fast ? " fast" : " f32") << " m=" << m << " k=" << k
                    << " n=" << n << " i=" << i;
              }
            }
  }
}

TEST(CpuMatmul, RowResultsIndependentOfBatchAndThreads) {
  for (Isa isa : available_isas()) {
    const int64_t k = 1000, n = 301;
    const Weights w = make_weights(DType::BF16, n, k, 5);
    const auto x = make_input(70, k, 6);
    std::vector<float> batch(70 * n), single(n);
    CpuBackend two(isa, 2), one(isa, 1);
    for (bool fast : {false, true}) {
      two.matmul(x.data(), 70, w.view, batch.data(), fast);
      for (int64_t r : {0, 3, 4, 63, 64, 69}) {
        for (CpuBackend* backend : {&one, &two}) {
          backend->matmul(x.data() + r * k, 1, w.view, single.data(), fast);
          ASSERT_EQ(0, std::memcmp(single.data(), batch.data() + r * n, n * sizeof(float)))
              << isa_name(isa) << " row " << r << " threads " << backend->threads() << (fast ? " fast" : " f32");
        }
      }
    }
  }
}

}  // namespace
}  // namespace ds
