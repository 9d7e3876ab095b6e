// CPU matmul kernels (AMX, AVX-512 BF16, AVX-512 F, AVX2) against the scalar reference on odd sizes and
// tails, and the batch / thread independence every row's result must have. The scalar ISA runs the
// reference's matmul itself (RefBackend::matmul), so it is not in these sweeps: checking it against
// the reference would compare a function with itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/formats/bf16_panels/bf16_panels.h"
#include "kernels/formats/bf16_panels/bf16_panels_kernels.h"
#include "kernels/formats/int8_panels/int8_panels.h"
#include "kernels/formats/weight_format.h"
#include "isa_test.h"
#include "kernels/ref/ref_backend.h"
#include "test_util.h"
#include "kernels/weight_access.h"
#include "util/float16.h"
#include "util/random.h"

namespace ds {
namespace {

struct Weights {
  std::vector<std::byte> bytes;
  TensorView view;
};

// Int8: random codes and scales packed into the panel layout (64-byte aligned, padding as the loader
// writes it). Odd n and k leave partial panels and groups.
Weights make_int8_weights(int64_t n, int64_t k, uint64_t seed, int64_t activation_planes = 1) {
  Weights w;
  const int64_t bytes = int8_packed_bytes(n, k), groups = int8_groups(k);
  w.bytes.resize(static_cast<size_t>(bytes + 64));
  std::byte* data = w.bytes.data();
  data += (64 - reinterpret_cast<uintptr_t>(data) % 64) % 64;
  int8_clear_packed(data, n, k);
  Xoshiro256 rng(seed);
  std::vector<int8_t> q(static_cast<size_t>(k));
  std::vector<uint16_t> scales(static_cast<size_t>(groups));  // fp16
  for (int64_t r = 0; r < n; ++r) {
    for (int8_t& v : q) v = static_cast<int8_t>(static_cast<int>(rng.uniform() * 255.0f) - 127);
    for (uint16_t& s : scales) s = float_to_fp16(0.001f + 0.02f * rng.uniform());
    int8_pack_row(data, k, r, q.data(), scales.data());
  }
  w.view = TensorView{"w", DType::I8, {n, k}, data, static_cast<uint64_t>(bytes), WeightFormatId::int8_panels};
  w.view.activation_planes = activation_planes;
  return w;
}

Weights make_weights(DType dtype, int64_t n, int64_t k, uint64_t seed) {
  if (dtype == DType::I8) return make_int8_weights(n, k, seed);
  Weights w;
  const size_t size = dtype_size(dtype);
  w.bytes.resize(static_cast<size_t>(n * k) * size + 2);  // +2: start the data at an odd address below
  std::byte* data = w.bytes.data() + (dtype == DType::F32 ? 0 : 2);
  Xoshiro256 rng(seed);
  for (int64_t i = 0; i < n * k; ++i) {
    const float value = rng.uniform() * 2.0f - 1.0f;
    if (dtype == DType::F32) std::memcpy(data + 4 * i, &value, 4);
    else {
      const uint16_t bits = dtype == DType::BF16 ? float_to_bf16(value) : float_to_fp16(value);
      std::memcpy(data + 2 * i, &bits, 2);
    }
  }
  w.view = TensorView{"w", dtype, {n, k}, data, static_cast<uint64_t>(n * k) * size};
  return w;
}

// Bf16 panels: random bf16 weights packed into the panel layout (partial panels for n % 32 != 0, a
// zero input pair half for odd k).
Weights make_bf16_panel_weights(int64_t n, int64_t k, uint64_t seed) {
  const Weights rows = make_weights(DType::BF16, n, k, seed);
  Weights w;
  w.bytes.resize(static_cast<size_t>(bf16_packed_bytes(n, k)));
  bf16_pack_panels(rows.view.data, n, k, 0, n, w.bytes.data());
  w.view = TensorView{"w", DType::BF16, {n, k}, w.bytes.data(), w.bytes.size()};
  w.view.format = WeightFormatId::bf16_panels;
  return w;
}

// The ISAs whose matmul kernels are the CPU backend's own.
const auto kMatmulIsas = ::testing::Values(Isa::avx2, Isa::avx512, Isa::amx);

class CpuMatmul : public test::IsaTest {};

TEST_P(CpuMatmul, MatchesReferenceOnOddSizesForEveryDtypeAndMode) {
  RefBackend ref;
  const Isa isa = GetParam();
  CpuBackend cpu(isa, 2);
  for (DType dtype : {DType::BF16, DType::F16, DType::F32})
    for (bool fast : {false, true})
      for (int64_t m : {1, 3, 5, 67})
        for (int64_t k : {1, 15, 17, 31, 33, 100, 259})
          for (int64_t n : {1, 7, 19, 64}) {
            const Weights w = make_weights(dtype, n, k, 1000 * k + n);
            const auto x = test::random_activations(m, k, m);
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

TEST_P(CpuMatmul, RowResultsIndependentOfBatchAndThreads) {
  const Isa isa = GetParam();
  const int64_t k = 1000, n = 301;
  const Weights w = make_weights(DType::BF16, n, k, 5);
  const auto x = test::random_activations(70, k, 6);
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

// The packer is a permutation: every element reads back through the layout, padding is zero.
TEST(Bf16Panels, PackedWeightsReadBack) {
  for (int64_t k : {1, 2, 31, 32, 33, 100}) {
    const int64_t n = 37;
    const Weights rows = make_weights(DType::BF16, n, k, 3);
    const Weights panels = make_bf16_panel_weights(n, k, 3);
    ASSERT_EQ(panels.bytes.size(), static_cast<size_t>(bf16_panels(n) * bf16_panel_pairs(k) * kBf16PairBytes));
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t r = 0; r < n; ++r) {
      format_of(panels.view).dequantize_row(panels.view, r, row.data());
      for (int64_t c = 0; c < k; ++c) ASSERT_EQ(row[c], weight_at(rows.view, r * k + c)) << k << " " << r << " " << c;
    }
    for (int64_t r = 0; r < bf16_panels(n) * kBf16PanelRows; ++r)
      for (int64_t c = 0; c < 2 * bf16_pairs(k); ++c)
        if (r >= n || c >= k) {
          uint16_t bits;
          std::memcpy(&bits, panels.bytes.data() + bf16_panel_offset(k, r, c), 2);
          ASSERT_EQ(bits, 0) << "padding at " << r << ", " << c;
        }
  }
}

// Every ISA and mode on panel weights: the AVX-512 BF16 kernel in fast mode, the AVX2 kernel in both,
// the reference otherwise.
class CpuMatmulBf16Panels : public test::IsaTest {};

TEST_P(CpuMatmulBf16Panels, MatchesReferenceOnOddSizes) {
  RefBackend ref;
  const Isa isa = GetParam();
  CpuBackend cpu(isa, 2);
  for (bool fast : {false, true})
    for (int64_t m : {1, 5, 12, 13, 67})
      for (int64_t k : {1, 2, 17, 31, 33, 259, 2051})  // 2051: two pair blocks of the tiled path
        for (int64_t n : {1, 19, 32, 33, 97}) {
          const Weights w = make_bf16_panel_weights(n, k, 1000 * k + n);
          const auto x = test::random_activations(m, k, m);
          std::vector<float> expected(m * n), actual(m * n);
          ref.matmul(x.data(), m, w.view, expected.data(), fast);
          cpu.matmul(x.data(), m, w.view, actual.data(), fast);
          for (int64_t i = 0; i < m * n; ++i)
            ASSERT_NEAR(actual[i], expected[i], 1e-6 * k * 4.0 + 1e-6)  // summation order only
                << isa_name(isa) << (fast ? " fast" : " f32") << " m=" << m << " k=" << k << " n=" << n << " i=" << i;
        }
}

// Decode rows (m <= 12: whole k per panel; AMX: m <= 16; AVX2: m <= 6), tiled batches, several token
// blocks (m = 800 > 768) and several pair blocks (k = 2500 > 2048) give every row the same bits, on 1
// or 2 threads, with each ISA's bf16 panel kernel (AVX-512 BF16, AMX or AVX2).
class CpuMatmulBf16PanelKernel : public test::IsaTest {};

TEST_P(CpuMatmulBf16PanelKernel, RowResultsIndependentOfBatchAndThreads) {
  const Isa isa = GetParam();
  const int64_t k = 2500, n = 301, m = 800;
  const Weights w = make_bf16_panel_weights(n, k, 5);
  const auto x = test::random_activations(m, k, 6);
  std::vector<float> batch(m * n), small(7 * n), single(n), seventeen(17 * n);
  CpuBackend two(isa, 2), one(isa, 1);
  two.matmul(x.data(), m, w.view, batch.data(), true);
  one.matmul(x.data() + 60 * k, 7, w.view, small.data(), true);  // rows 60 .. 66 as one decode-sized batch
  ASSERT_EQ(0, std::memcmp(small.data(), batch.data() + 60 * n, small.size() * sizeof(float)));
  one.matmul(x.data() + 5 * k, 17, w.view, seventeen.data(), true);  // AMX: one full token tile and one row
  ASSERT_EQ(0, std::memcmp(seventeen.data(), batch.data() + 5 * n, seventeen.size() * sizeof(float)));
  for (int64_t r : {0, 11, 12, 13, 15, 16, 17, 63, 767, 768, 799}) {
    for (CpuBackend* backend : {&one, &two}) {
      backend->matmul(x.data() + r * k, 1, w.view, single.data(), true);
      ASSERT_EQ(0, std::memcmp(single.data(), batch.data() + r * n, n * sizeof(float)))
          << isa_name(isa) << " row " << r << " threads " << backend->threads();
    }
  }
}

// The AMX kernel computes exactly what bf16_panels_amx_reference.cpp writes down (the measured
// arithmetic of `tdpbf16ps`): equal values for every output, on odd sizes, tails of panels, pairs
// and token tiles, decode-sized batches (tiles of m rows) and prefill ones (2 × 2 tiles).
TEST(AmxBf16Panels, EqualsItsReferenceOnOddSizes) {
  if (detect_isa() < Isa::amx)
    GTEST_SKIP() << "this CPU has no AMX (" << amx_unavailable_reason() << "): the AMX bf16 kernel is not checked here";
  CpuBackend cpu(Isa::amx, 2);
  for (int64_t m : {1, 2, 3, 4, 5, 16, 17, 31, 33, 67})  // 1–4: the vector form of the same arithmetic
    for (int64_t k : {1, 2, 17, 31, 33, 64, 259, 2051})
      for (int64_t n : {1, 19, 32, 33, 97}) {
        const Weights w = make_bf16_panel_weights(n, k, 1000 * k + n);
        const auto x = test::random_activations(m, k, m);
        std::vector<float> expected(m * n), actual(m * n);
        kernels::bf16_panels_amx_reference_matmul(x.data(), m, w.view, expected.data());
        cpu.matmul(x.data(), m, w.view, actual.data(), true);
        for (int64_t i = 0; i < m * n; ++i)
          ASSERT_EQ(actual[i], expected[i]) << "m=" << m << " k=" << k << " n=" << n << " i=" << i;
      }
}

// The AVX2 kernel computes exactly what bf16_panels_fma_reference.cpp writes down (each output one
// FMA chain over its inputs in order), in both modes: whole-panel tiles (1 and 2 tokens), half-panel
// tiles (3–6), the blocked path (m > 6: several token tiles, two pair blocks at k = 2051), partial
// panels and odd k.
TEST(Avx2Bf16Panels, EqualsItsReferenceOnOddSizes) {
  if (detect_isa() < Isa::avx2) GTEST_SKIP() << "this CPU lacks AVX2: the AVX2 bf16 panel kernel is not checked here";
  CpuBackend cpu(Isa::avx2, 2);
  for (bool fast : {false, true})
    for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 13, 67})
      for (int64_t k : {1, 2, 17, 33, 259, 2051})
        for (int64_t n : {1, 19, 32, 33, 97}) {
          const Weights w = make_bf16_panel_weights(n, k, 1000 * k + n);
          const auto x = test::random_activations(m, k, m);
          std::vector<float> expected(m * n), actual(m * n);
          kernels::bf16_panels_fma_reference_matmul(x.data(), m, w.view, expected.data(), fast);
          cpu.matmul(x.data(), m, w.view, actual.data(), fast);
          for (int64_t i = 0; i < m * n; ++i)
            ASSERT_EQ(actual[i], expected[i])
                << (fast ? "fast" : "f32") << " m=" << m << " k=" << k << " n=" << n << " i=" << i;
        }
}

// matmuls (projections sharing an input) on every ISA, 1–3 threads and a few batch sizes: each
// output of `weights` must be bit-identical to its own matmul.
void expect_matmuls_equal_own_matmuls(Isa isa, const std::vector<const Weights*>& weights, int64_t k, const char* what) {
  for (int threads : {1, 2, 3})
    for (int64_t m : {1, 7, 13, 70}) {
      CpuBackend cpu(isa, threads);
      const auto x = test::random_activations(m, k, 5);
      std::vector<std::vector<float>> together(weights.size()), alone(weights.size());
      std::vector<Backend::MatmulOutput> outputs;
      for (size_t i = 0; i < weights.size(); ++i) {
        together[i].resize(m * weights[i]->view.shape[0]);
        alone[i].resize(together[i].size());
        outputs.push_back({&weights[i]->view, together[i].data()});
        cpu.matmul(x.data(), m, weights[i]->view, alone[i].data(), true);
      }
      cpu.matmuls(x.data(), m, outputs, true);
      for (size_t i = 0; i < weights.size(); ++i)
        ASSERT_EQ(0, std::memcmp(together[i].data(), alone[i].data(), alone[i].size() * sizeof(float)))
            << what << ": " << isa_name(isa) << " threads " << threads << " m " << m << " output " << i;
    }
}

// Bf16 panels: whatever the sizes (a 1-panel output, partial panels); mixed layouts too.
class CpuMatmuls : public test::IsaTest {};

TEST_P(CpuMatmuls, EachOutputEqualsItsOwnMatmul) {
  const int64_t k = 300;
  const Weights a = make_bf16_panel_weights(301, k, 1), b = make_bf16_panel_weights(16, k, 2),
                c = make_bf16_panel_weights(64, k, 3), rows = make_weights(DType::BF16, 33, k, 4);
  expect_matmuls_equal_own_matmuls(GetParam(), {&a, &b, &c}, k, "bf16 panels");
  expect_matmuls_equal_own_matmuls(GetParam(), {&a, &b, &c, &rows}, k, "bf16 panels and rows");
}

// No rows (a layer that needs none of its outputs): nothing is written and nothing is read, on every
// ISA and format (the AMX bf16 kernel once indexed its decode table with m − 1).
TEST_P(CpuMatmuls, NoRowsIsANoOp) {
  const int64_t k = 300;
  const Weights panels = make_bf16_panel_weights(64, k, 1), int8 = make_int8_weights(33, k, 2, 1);
  for (const Weights* w : {&panels, &int8}) {
    CpuBackend cpu(GetParam(), 2);
    std::vector<float> y(8, 7.0f);  // [8] sentinels: none may change
    cpu.matmul(nullptr, 0, w->view, y.data(), true);
    const Backend::MatmulOutput outputs[] = {{&w->view, y.data()}, {&w->view, y.data() + 4}};
    cpu.matmuls(nullptr, 0, outputs, false);
    EXPECT_EQ(y, std::vector<float>(8, 7.0f));
  }
}

// Int8: outputs sharing an activation width go through one quantisation and one range of panels
// per thread, with neighbours of both widths (the DeltaNet's qkv, z at 16 bits then b, a at 8) and
// a 1-panel output between them.
TEST_P(CpuMatmuls, Int8OutputsEqualTheirOwnMatmul) {
  const int64_t k = 300;
  const Weights a = make_int8_weights(301, k, 1, 2), b = make_int8_weights(70, k, 2, 2),
                c = make_int8_weights(16, k, 3, 1), d = make_int8_weights(33, k, 4, 1);
  expect_matmuls_equal_own_matmuls(GetParam(), {&a, &b, &c, &d}, k, "int8");
}

// Int8 × int8 (8- and 16-bit activations): every ISA computes exactly the reference's sequence
// (exact integer dots, one fma per group in order), so the results are equal bit for bit, tails of
// panels and groups included.
class CpuMatmulInt8 : public test::IsaTest {};

TEST_P(CpuMatmulInt8, BitIdenticalToReferenceOnOddSizes) {
  RefBackend ref;
  const Isa isa = GetParam();
  CpuBackend cpu(isa, 2);
  for (int64_t planes : {1, 2})
    for (int64_t m : {1, 2, 4, 5, 7, 13, 16, 17, 33, 64, 65, 67})  // AMX: tiles of 16 token-planes (1-row tails),
                                                                   // the panel's own codes to 64 tokens, then a signed copy
      for (int64_t k : {1, 15, 31, 32, 33, 100, 259})
        for (int64_t n : {1, 7, 19, 32, 33, 64, 97}) {
          const Weights w = make_int8_weights(n, k, 1000 * k + n, planes);
          auto x = test::random_activations(m, k, m);
          if (k >= 33)
            std::fill(x.begin() + 32, x.begin() + 64 < x.end() ? x.begin() + 64 : x.end(), 0.0f);  // a zero group
          std::vector<float> expected(m * n), actual(m * n);
          for (bool fast : {false, true}) {
            ref.matmul(x.data(), m, w.view, expected.data(), fast);
            cpu.matmul(x.data(), m, w.view, actual.data(), fast);
            ASSERT_EQ(0, std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float)))
                << isa_name(isa) << " planes=" << planes << " m=" << m << " k=" << k << " n=" << n;
          }
        }
}

// Long rows put few tokens in a block (AMX: 1 MiB of activations, 64 tokens of 8-bit and 32 of
// 16-bit activations at k = 16,384), so 83 tokens cross blocks (the signed copy's) and the last block
// ends in a short tile; 40 tokens of 16-bit activations cross blocks on the panel's own codes, where
// each block's first tile streams the panel.
TEST_P(CpuMatmulInt8, BitIdenticalAcrossTokenBlocks) {
  RefBackend ref;
  const Isa isa = GetParam();
  CpuBackend cpu(isa, 2);
  const int64_t k = 16384, n = 40;
  for (int64_t m : {40, 83})
    for (int64_t planes : {1, 2}) {
      const Weights w = make_int8_weights(n, k, 7 + planes, planes);
      const auto x = test::random_activations(m, k, 5);
      std::vector<float> expected(m * n), actual(m * n);
      ref.matmul(x.data(), m, w.view, expected.data(), true);
      cpu.matmul(x.data(), m, w.view, actual.data(), true);
      ASSERT_EQ(0, std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float)))
          << isa_name(isa) << " planes=" << planes << " m=" << m;
    }
}

// The int8 result approximates the fp32 product of the dequantised weights within the activation
// rounding: |error| ≤ Σ_g scale_x,g / 2 · Σ_i |w_i| per output (plus fp32 rounding), with scale_x =
// amax / 127 for int8 activations and amax / 32639 for 16-bit ones.
TEST(RefMatmulInt8, CloseToTheDequantisedProduct) {
  for (int64_t planes : {1, 2}) {
    const int64_t m = 3, k = 259, n = 33;
    const double levels = planes == 2 ? 32639.0 : 127.0;
    const Weights w = make_int8_weights(n, k, 7, planes);
    const auto x = test::random_activations(m, k, 8);
    std::vector<float> y(m * n), row(k);
    RefBackend ref;
    ref.matmul(x.data(), m, w.view, y.data(), false);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        format_of(w.view).dequantize_row(w.view, c, row.data());
        double exact = 0, bound = 1e-5;
        for (int64_t g = 0; g < int8_groups(k); ++g) {
          float amax = 0;
          for (int64_t i = g * 32; i < std::min<int64_t>(k, g * 32 + 32); ++i)
            amax = std::max(amax, std::fabs(x[r * k + i]));
          for (int64_t i = g * 32; i < std::min<int64_t>(k, g * 32 + 32); ++i) {
            const double wi = row[i];
            exact += wi * x[r * k + i];
            bound += std::fabs(wi) * amax / levels * 0.5 * 1.0001;
          }
        }
        ASSERT_NEAR(y[r * n + c], exact, bound) << "planes " << planes << " " << r << " " << c;
      }
  }
}

// The packer writes what the layout's accessors read, padding included.
TEST(Int8Panels, PackedRowsReadBack) {
  for (int64_t k : {1, 31, 32, 33, 100}) {
    const int64_t n = 37, groups = int8_groups(k);
    std::vector<std::byte> packed(static_cast<size_t>(int8_packed_bytes(n, k)));
    int8_clear_packed(packed.data(), n, k);
    std::vector<int8_t> q(static_cast<size_t>(n * k));
    std::vector<uint16_t> scales(static_cast<size_t>(n * groups));  // fp16
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = float_to_fp16(0.5f + static_cast<float>(i));
    for (int64_t r = 0; r < n; ++r) int8_pack_row(packed.data(), k, r, q.data() + r * k, scales.data() + r * groups);
    const TensorView w{"w", DType::I8, {n, k}, packed.data(), packed.size(), WeightFormatId::int8_panels};
    for (int64_t r = 0; r < int8_panels(n) * kInt8PanelRows; ++r)
      for (int64_t c = 0; c < groups * kInt8ScaleGroup; ++c) {
        const bool inside = r < n && c < k;
        ASSERT_EQ(int8_weight_q(w, r, c), inside ? q[r * k + c] : 0) << k << " " << r << " " << c;
        if (c % kInt8ScaleGroup == 0) {
          ASSERT_EQ(int8_weight_scale(w, r, c / kInt8ScaleGroup),
                    r < n ? fp16_to_float(scales[r * groups + c / kInt8ScaleGroup]) : 0.0f);
        }
      }
  }
}

TEST_P(CpuMatmulInt8, RowResultsIndependentOfBatchAndThreads) {
  const Isa isa = GetParam();
  for (int64_t planes : {1, 2}) {
    const int64_t k = 1000, n = 301;
    const Weights w = make_int8_weights(n, k, 5, planes);
    const auto x = test::random_activations(70, k, 6);
    std::vector<float> batch(70 * n), single(n);
    CpuBackend two(isa, 2), one(isa, 1);
    two.matmul(x.data(), 70, w.view, batch.data(), true);
    for (int64_t r : {0, 3, 4, 5, 6, 63, 64, 69}) {
      for (CpuBackend* backend : {&one, &two}) {
        backend->matmul(x.data() + r * k, 1, w.view, single.data(), true);
        ASSERT_EQ(0, std::memcmp(single.data(), batch.data() + r * n, n * sizeof(float)))
            << isa_name(isa) << " planes " << planes << " row " << r << " threads " << backend->threads();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, CpuMatmul, kMatmulIsas, test::isa_param_name);
INSTANTIATE_TEST_SUITE_P(Isas, CpuMatmulBf16Panels, kMatmulIsas, test::isa_param_name);
INSTANTIATE_TEST_SUITE_P(Isas, CpuMatmulBf16PanelKernel, kMatmulIsas, test::isa_param_name);
INSTANTIATE_TEST_SUITE_P(Isas, CpuMatmuls, kMatmulIsas, test::isa_param_name);
INSTANTIATE_TEST_SUITE_P(Isas, CpuMatmulInt8, kMatmulIsas, test::isa_param_name);

}  // namespace
}  // namespace ds
