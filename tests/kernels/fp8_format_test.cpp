// Block FP8 (kernels/formats/fp8/): e4m3 codes and the quantiser against transformers (the FP8
// fixtures' tables, tools/reference/make_fp8_fixtures.py), the two layouts' values, packing, and the
// FP8 kernels against their reference bit for bit — odd sizes, partial 128-blocks, every scale dtype
// — with every row's result independent of the batch and the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "io/safetensors_checkpoint.h"
#include "isa_test.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/formats/bf16_panels/bf16_panels.h"
#include "kernels/formats/fp8/block_fp8.h"
#include "kernels/formats/fp8/e4m3.h"
#include "kernels/formats/fp8/fp8_blocks_format.h"
#include "kernels/formats/fp8/fp8_panels.h"
#include "kernels/formats/fp8/fp8_panels_format.h"
#include "kernels/formats/fp8/fp8_quantize.h"
#include "kernels/ref/ref_backend.h"
#include "test_util.h"
#include "util/float16.h"
#include "util/random.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(DS_FIXTURES_DIR) / "fp8";

template <typename T>
std::vector<T> read_values(const SafetensorsCheckpoint& file, const std::string& name) {
  const TensorView* view = file.find(name);
  EXPECT_NE(view, nullptr) << name;
  if (view == nullptr) return {};
  std::vector<T> values(view->nbytes / sizeof(T));
  std::memcpy(values.data(), view->data, view->nbytes);
  return values;
}

TEST(E4m3, CodesHaveTheirValues) {
  EXPECT_EQ(e4m3_to_float(0x00), 0.0f);
  EXPECT_TRUE(std::signbit(e4m3_to_float(0x80)));
  EXPECT_EQ(e4m3_to_float(0x01), 0x1p-9f);  // smallest subnormal
  EXPECT_EQ(e4m3_to_float(0x07), 7 * 0x1p-9f);
  EXPECT_EQ(e4m3_to_float(0x08), 0x1p-6f);  // smallest normal
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_to_float(0xfe), -448.0f);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7f)) && std::isnan(e4m3_to_float(0xff)));
  for (int code = 0; code < 256; ++code) {  // every finite code round-trips, and is exact in bf16
    const float value = e4m3_to_float(static_cast<uint8_t>(code));
    if (std::isnan(value)) continue;
    EXPECT_EQ(float_to_e4m3(value), code) << code;
    EXPECT_EQ(bf16_to_float(float_to_bf16(value)), value) << code;
  }
}

// torch's float32 → float8_e4m3fn conversion, recorded by the fixture script: the value of every bf16
// bit pattern (ties, subnormals, saturation, ±inf, NaN) and 4096 random floats.
TEST(E4m3, EncodingMatchesTorch) {
  auto file = SafetensorsCheckpoint::open_file((kFixtures / "g_fp8_full_blocks" / "reference.safetensors").string());
  ASSERT_TRUE(file.ok()) << file.status().message();
  const auto pattern_codes = read_values<uint8_t>(*file, "e4m3.bf16_pattern_codes");
  ASSERT_EQ(pattern_codes.size(), 65536u);
  for (uint32_t bits = 0; bits < 65536; ++bits)
    ASSERT_EQ(float_to_e4m3(bf16_to_float(static_cast<uint16_t>(bits))), pattern_codes[bits]) << "bf16 bits " << bits;
  const auto values = read_values<float>(*file, "e4m3.random_values");
  const auto codes = read_values<uint8_t>(*file, "e4m3.random_codes");
  ASSERT_EQ(values.size(), codes.size());
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(float_to_e4m3(values[i]), codes[i]) << values[i];
}

// transformers' Fp8Quantize made the fixtures' codes from BF16 sources (recorded with its F32 inverse
// scales): ours gives the same codes and scales bit for bit, partial blocks included.
TEST(Fp8Quantize, MatchesTransformers) {
  int checked = 0;
  for (const char* fixture : {"g_fp8_full_blocks", "h_fp8_partial_blocks"}) {
    auto reference = SafetensorsCheckpoint::open_file((kFixtures / fixture / "reference.safetensors").string());
    auto model = SafetensorsCheckpoint::open_file((kFixtures / fixture / "model.safetensors").string());
    ASSERT_TRUE(reference.ok() && model.ok());
    for (const auto& [name, view] : reference->tensors()) {
      if (!name.starts_with("quantize.") || !name.ends_with(".source")) continue;
      const std::string weight = name.substr(9, name.size() - 9 - 7);
      const TensorView* codes = model->find(weight);
      ASSERT_NE(codes, nullptr) << weight;
      const int64_t n = view.shape[0], k = view.shape[1];
      const auto source = read_values<uint16_t>(*reference, name);
      const auto inverse = read_values<float>(*reference, "quantize." + weight + ".inv_scale_f32");
      ASSERT_EQ(static_cast<int64_t>(inverse.size()), fp8_blocks(n) * fp8_blocks(k));
      std::vector<float> rows(static_cast<size_t>(n * k));
      for (int64_t i = 0; i < n * k; ++i) rows[i] = bf16_to_float(source[i]);
      std::vector<uint8_t> ours(static_cast<size_t>(n * k));
      std::vector<float> ours_inverse(inverse.size());
      for (int64_t b = 0; b < fp8_blocks(n); ++b)
        fp8_quantize_block_row(rows.data() + b * kFp8Block * k, std::min(kFp8Block, n - b * kFp8Block), k,
                               ours.data() + b * kFp8Block * k, ours_inverse.data() + b * fp8_blocks(k));
      EXPECT_EQ(0, std::memcmp(ours.data(), codes->data, ours.size())) << fixture << " " << weight;
      EXPECT_EQ(0, std::memcmp(ours_inverse.data(), inverse.data(), 4 * inverse.size())) << fixture << " " << weight;
      ++checked;
    }
  }
  EXPECT_GE(checked, 5);
}

// A random block-FP8 weight: codes over every value class (NaN left out), scales of `scale_dtype`
// spanning 2^-20 .. 2^-2, as the loader would see it.
struct Fp8Weight {
  std::vector<std::byte> codes, scales;
  TensorView view;
};

Fp8Weight make_fp8(int64_t n, int64_t k, DType scale_dtype, uint64_t seed) {
  Fp8Weight w;
  Xoshiro256 rng(seed);
  w.codes.resize(static_cast<size_t>(n * k) + 1);  // +1: start the codes at an odd address
  for (auto& code : w.codes) {
    auto value = static_cast<uint8_t>(rng.next() & 0xff);
    if ((value & 0x7f) == 0x7f) value ^= 1;  // no NaN
    code = static_cast<std::byte>(value);
  }
  const int64_t grid = fp8_blocks(n) * fp8_blocks(k);
  w.scales.resize(static_cast<size_t>(grid * dtype_size(scale_dtype)));
  for (int64_t i = 0; i < grid; ++i) {
    const float scale = std::ldexp(1.0f + rng.uniform(), -2 - static_cast<int>(rng.next() % 19));
    if (scale_dtype == DType::F32) std::memcpy(w.scales.data() + 4 * i, &scale, 4);
    else {
      const uint16_t bits = scale_dtype == DType::BF16 ? float_to_bf16(scale) : float_to_fp16(scale);
      std::memcpy(w.scales.data() + 2 * i, &bits, 2);
    }
  }
  w.view = TensorView{"w", DType::F8_E4M3, {n, k}, w.codes.data() + 1, static_cast<uint64_t>(n * k), WeightFormatId::fp8_blocks};
  w.view.block_scales = w.scales.data();
  w.view.block_scale_dtype = scale_dtype;
  return w;
}

struct Packed {
  std::vector<std::byte> bytes;
  TensorView view;
};

Packed pack_panels(const TensorView& source) {
  const Fp8Format& panels = fp8_panels_format();
  Packed packed;
  const int64_t n = source.shape[0], k = source.shape[1];
  packed.bytes.resize(panels.bytes(n, k) + 64);
  std::byte* data = packed.bytes.data() + (64 - reinterpret_cast<uintptr_t>(packed.bytes.data()) % 64) % 64;
  panels.pack(source, 0, panels.panels(n) / 2, data);  // in two calls, as threads pack
  panels.pack(source, panels.panels(n) / 2, panels.panels(n), data);
  packed.view = panels.packed_view(source, data);
  return packed;
}

// Both layouts give every element its value, e4m3 × scale in fp32; the panels' padding is code 0.
TEST(Fp8Panels, PackedWeightsReadBackTheirValues) {
  for (DType scale_dtype : {DType::BF16, DType::F16, DType::F32})
    for (int64_t n : {1, 31, 33, 130})
      for (int64_t k : {1, 2, 127, 129, 300}) {
        const Fp8Weight w = make_fp8(n, k, scale_dtype, n * 1000 + k);
        const Packed packed = pack_panels(w.view);
        ASSERT_EQ(packed.view.format, WeightFormatId::fp8_panels);
        std::vector<float> stored(k), panels(k);
        for (int64_t r = 0; r < n; ++r) {
          fp8_blocks_format().dequantize_row(w.view, r, stored.data());
          fp8_panels_format().dequantize_row(packed.view, r, panels.data());
          for (int64_t c = 0; c < k; ++c) {
            const float want = e4m3_to_float(static_cast<uint8_t>(w.view.data[r * k + c])) * fp8_block_scale(w.view, r, c);
            ASSERT_EQ(std::bit_cast<uint32_t>(stored[c]), std::bit_cast<uint32_t>(want)) << r << ", " << c;
            ASSERT_EQ(std::bit_cast<uint32_t>(panels[c]), std::bit_cast<uint32_t>(want)) << r << ", " << c;
          }
        }
        for (int64_t r = 0; r < fp8_panels(n) * kFp8PanelRows; ++r)
          for (int64_t c = 0; c < 2 * fp8_pairs(k); ++c)
            if (r >= n || c >= k) {
              ASSERT_EQ(packed.view.data[fp8_panel_offset(k, r, c)], std::byte{0}) << r << ", " << c;
            }
      }
}

// In fast mode both layouts run one arithmetic (fp8_format.h): the reference on either gives the same
// bits, and it differs from the dequantised rows' plain fp32 sum by rounding only: per output at most
// k · 2^-23 · Σ|x̂ · w| (two summation orders of exact products, and the scale applied per block).
TEST(Fp8Format, FastArithmeticIsOneForBothLayoutsAndCloseToThePlainSum) {
  RefBackend ref;
  for (int64_t k : {1, 17, 128, 129, 300})
    for (int64_t n : {7, 33}) {
      const int64_t m = 3;
      const Fp8Weight w = make_fp8(n, k, DType::BF16, 7 * k + n);
      const Packed packed = pack_panels(w.view);
      const auto x = test::random_activations(m, k, k);
      std::vector<float> stored(m * n), panels(m * n), plain(m * n), row(k);
      ref.matmul(x.data(), m, w.view, stored.data(), true);
      ref.matmul(x.data(), m, packed.view, panels.data(), true);
      ASSERT_EQ(0, std::memcmp(stored.data(), panels.data(), 4 * stored.size())) << k << " " << n;
      fp8_blocks_format().WeightFormat::reference_matmul(x.data(), m, w.view, plain.data(), true);
      for (int64_t c = 0; c < n; ++c) {
        fp8_blocks_format().dequantize_row(w.view, c, row.data());
        for (int64_t r = 0; r < m; ++r) {
          double magnitude = 0;
          for (int64_t i = 0; i < k; ++i) magnitude += std::fabs(bf16_to_float(float_to_bf16(x[r * k + i])) * row[i]);
          ASSERT_LE(std::fabs(stored[r * n + c] - plain[r * n + c]), k * 0x1p-23 * magnitude + 1e-30) << k << " " << n;
        }
      }
    }
}

class Fp8Kernels : public test::IsaTest {
 protected:
  void SetUp() override {
    test::IsaTest::SetUp();
    if (IsSkipped()) return;
    if (!fp8_panels_format().fast_matmul(GetParam(), true))
      GTEST_SKIP() << "no FP8 kernel at " << isa_name(GetParam()) << " on this CPU (AVX-512 needs VBMI): FP8 runs the reference";
  }
};

TEST_P(Fp8Kernels, MatchTheirReferenceBitForBit) {
  RefBackend ref;
  CpuBackend cpu(GetParam(), 2);
  for (DType scale_dtype : {DType::BF16, DType::F16, DType::F32})
    for (int64_t m : {1, 2, 4, 5, 12, 13, 67})
      for (int64_t k : {1, 2, 17, 128, 129, 300})
        for (int64_t n : {1, 19, 32, 33, 130}) {
          const Fp8Weight w = make_fp8(n, k, scale_dtype, 1000 * k + n + m);
          const Packed packed = pack_panels(w.view);
          const auto x = test::random_activations(m, k, m + k);
          std::vector<float> want(m * n), got(m * n);
          ref.matmul(x.data(), m, packed.view, want.data(), true);
          cpu.matmul(x.data(), m, packed.view, got.data(), true);
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), 4 * want.size()))
              << dtype_name(scale_dtype) << " m=" << m << " k=" << k << " n=" << n;
        }
  // Several 1,024-pair slices of the batched path, and a partial last slice and block.
  for (int64_t m : {3, 13}) {
    const int64_t k = 2300, n = 45;
    const Fp8Weight w = make_fp8(n, k, DType::BF16, 77 + m);
    const Packed packed = pack_panels(w.view);
    const auto x = test::random_activations(m, k, m);
    std::vector<float> want(m * n), got(m * n);
    ref.matmul(x.data(), m, packed.view, want.data(), true);
    cpu.matmul(x.data(), m, packed.view, got.data(), true);
    ASSERT_EQ(0, std::memcmp(want.data(), got.data(), 4 * want.size())) << "m=" << m << " k=" << k;
  }
}

// Decode rows (the fused path, m ≤ 4), batches (the widened-slice path), several token blocks
// (m = 800 > 768) and slices (k = 2500 > 2048), on 1 or 2 threads: every row the same bits.
TEST_P(Fp8Kernels, RowResultsIndependentOfBatchAndThreads) {
  const int64_t k = 2500, n = 301, m = 800;
  const Fp8Weight w = make_fp8(n, k, DType::BF16, 5);
  const Packed packed = pack_panels(w.view);
  const auto x = test::random_activations(m, k, 6);
  std::vector<float> batch(m * n), small(7 * n), single(n);
  CpuBackend two(GetParam(), 2), one(GetParam(), 1);
  two.matmul(x.data(), m, packed.view, batch.data(), true);
  one.matmul(x.data() + 60 * k, 7, packed.view, small.data(), true);
  ASSERT_EQ(0, std::memcmp(small.data(), batch.data() + 60 * n, small.size() * sizeof(float)));
  for (int64_t r : {0, 3, 11, 12, 13, 767, 768, 799})
    for (CpuBackend* backend : {&one, &two}) {
      backend->matmul(x.data() + r * k, 1, packed.view, single.data(), true);
      ASSERT_EQ(0, std::memcmp(single.data(), batch.data() + r * n, n * sizeof(float)))
          << "row " << r << ", " << backend->threads() << " thread(s)";
    }
}

// FP8 panels read the bf16 panels' activations: neighbours of both formats share one preparation and
// give what each gives alone; f32 mode runs the reference (the kernels multiply bf16 inputs).
TEST_P(Fp8Kernels, ShareActivationsWithBf16PanelsAndFallBackInF32Mode) {
  CpuBackend cpu(GetParam(), 2);
  RefBackend ref;
  const int64_t k = 256, m = 5;
  const Fp8Weight a = make_fp8(64, k, DType::BF16, 1);
  const Packed pa = pack_panels(a.view);
  std::vector<uint16_t> rows(40 * k);  // [40, k] bf16, then in bf16 panels
  Xoshiro256 rng(2);
  for (uint16_t& v : rows) v = float_to_bf16(rng.uniform() - 0.5f);
  std::vector<std::byte> bf16(static_cast<size_t>(bf16_packed_bytes(40, k)));
  bf16_pack_panels(reinterpret_cast<const std::byte*>(rows.data()), 40, k, 0, 40, bf16.data());
  TensorView b{"b", DType::BF16, {40, k}, bf16.data(), bf16.size(), WeightFormatId::bf16_panels};
  const auto x = test::random_activations(m, k, 3);
  std::vector<float> ya(m * 64), yb(m * 40), alone_a(m * 64), alone_b(m * 40);
  const Backend::MatmulOutput outputs[] = {{&pa.view, ya.data()}, {&b, yb.data()}};
  cpu.matmuls(x.data(), m, outputs, true);
  cpu.matmul(x.data(), m, pa.view, alone_a.data(), true);
  cpu.matmul(x.data(), m, b, alone_b.data(), true);
  EXPECT_EQ(0, std::memcmp(ya.data(), alone_a.data(), 4 * ya.size()));
  EXPECT_EQ(0, std::memcmp(yb.data(), alone_b.data(), 4 * yb.size()));
  std::vector<float> f32(m * 64), want(m * 64);
  cpu.matmul(x.data(), m, pa.view, f32.data(), false);
  ref.matmul(x.data(), m, pa.view, want.data(), false);
  EXPECT_EQ(0, std::memcmp(f32.data(), want.data(), 4 * f32.size()));
}

// A NaN code (0x7f, 0xff: never in a checkpoint a quantiser wrote) makes its outputs NaN, as in the
// reference; every other output keeps its bits.
TEST_P(Fp8Kernels, NanCodesGiveNanOutputs) {
  RefBackend ref;
  CpuBackend cpu(GetParam(), 1);
  const int64_t n = 64, k = 256;
  Fp8Weight w = make_fp8(n, k, DType::BF16, 9);
  w.view.data = w.codes.data() + 1;
  auto* codes = reinterpret_cast<uint8_t*>(w.codes.data() + 1);
  codes[5 * k + 3] = 0x7f, codes[40 * k + 200] = 0xff;  // rows 5 and 40, an odd and an even input
  const Packed packed = pack_panels(w.view);
  for (int64_t m : {1, 3}) {
    const auto x = test::random_activations(m, k, 4);
    std::vector<float> want(m * n), got(m * n);
    ref.matmul(x.data(), m, packed.view, want.data(), true);
    cpu.matmul(x.data(), m, packed.view, got.data(), true);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const float a = want[r * n + c], b = got[r * n + c];
        if (c == 5 || c == 40) {
          EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << "row " << c;
        } else {
          ASSERT_EQ(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b)) << "m=" << m << " row " << c;
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, Fp8Kernels, ::testing::Values(Isa::avx2, Isa::avx512, Isa::amx), test::isa_param_name);

}  // namespace
}  // namespace ds
