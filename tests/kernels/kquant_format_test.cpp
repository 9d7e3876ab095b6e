// The K-quant formats (kernels/formats/kquant/ and q4_k/, q5_k/, q6_k/, iq4_xs/): the block readers
// against gguf-py's dequantisation (random blocks of every code and scale pattern, values made by
// tools/reference/make_kquant_block_fixtures.py), the panels lossless, the reference arithmetic close
// to the exact product, and the AVX-512 kernels bit-identical to it for any batch and thread count.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "io/safetensors_checkpoint.h"
#include "isa_test.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/formats/iq4_xs/iq4_xs.h"
#include "kernels/formats/kquant/kquant_type.h"
#include "kernels/formats/q4_k/q4_k.h"
#include "kernels/formats/q5_k/q5_k.h"
#include "kernels/formats/q6_k/q6_k.h"
#include "kernels/ref/ref_backend.h"
#include "util/float16.h"
#include "util/random.h"
#include "util/str_cat.h"

namespace ds::kquant_format_test {
namespace {

const std::vector<const KquantType*>& all_types() {
  static const std::vector<const KquantType*> types{&q4_k_type(), &q5_k_type(), &q6_k_type(), &iq4_xs_type()};
  return types;
}

TEST(KquantBlocks, DequantizeBitIdenticalToGgufPy) {
  auto fixture = SafetensorsCheckpoint::open_file(std::string(DS_FIXTURES_DIR) + "/gguf/kquant_blocks.safetensors");
  ASSERT_TRUE(fixture.ok()) << fixture.status().message();
  for (const KquantType* type : all_types()) {
    SCOPED_TRACE(type->name());
    const TensorView* blocks = fixture->find(std::string(type->name()) + ".blocks");
    const TensorView* values = fixture->find(std::string(type->name()) + ".values");
    ASSERT_TRUE(blocks && values);
    const int64_t count = static_cast<int64_t>(blocks->nbytes) / type->block_bytes();
    ASSERT_EQ(values->nbytes, static_cast<uint64_t>(count * kSuperblock * 4));
    ASSERT_GE(count, 8);
    std::vector<float> got(kSuperblock);  // [256] one block
    for (int64_t b = 0; b < count; ++b) {
      type->dequantize(blocks->data + b * type->block_bytes(), got.data());
      ASSERT_EQ(0, std::memcmp(got.data(), values->data + b * kSuperblock * 4, kSuperblock * 4)) << "block " << b;
    }
  }
}

struct Blocks {
  std::vector<std::byte> bytes;  // [n, k / 256] GGUF blocks
  TensorView view;
};

// Random blocks: random bytes, with every 2-byte field a random finite fp16 (d and dmin: magnitudes
// around 2^-8, some negative; Q6_K's int8 scales and IQ4_XS's scale bits stay random).
Blocks make_blocks(const KquantType& type, int64_t n, int64_t k, uint64_t seed) {
  Blocks w;
  w.bytes.resize(static_cast<size_t>(n * (k / kSuperblock) * type.block_bytes()));
  Xoshiro256 rng(seed);
  for (std::byte& b : w.bytes) b = static_cast<std::byte>(rng.next() % 256);
  for (size_t at = 0; at < w.bytes.size(); at += static_cast<size_t>(type.block_bytes()))
    for (const KquantField& field : type.fields())
      if (field.element_bytes == 2) {
        const float value = (rng.uniform() - 0.3f) * std::ldexp(1.0f, -8 + static_cast<int>(rng.next() % 4));
        const uint16_t bits = float_to_fp16(value);
        std::memcpy(&w.bytes[at + static_cast<size_t>(field.block_offset)], &bits, 2);
      }
  w.view = TensorView{std::string(type.name()) + " weight", DType::U8, {n, k}, w.bytes.data(), w.bytes.size(),
                      type.blocks_id()};
  return w;
}

struct Packed {
  std::vector<std::byte> storage;
  TensorView view;
};

Packed pack(const KquantType& type, const TensorView& source) {
  const WeightFormat& panels = type.panels_format();
  const int64_t n = source.shape[0], k = source.shape[1];
  Packed p;
  p.storage.resize(panels.bytes(n, k) + 64);
  std::byte* data = p.storage.data() + (64 - reinterpret_cast<uintptr_t>(p.storage.data()) % 64) % 64;
  // Two calls on disjoint panel ranges, as the loader's threads make them.
  const int64_t half = panels.panels(n) / 2;
  panels.pack(source, 0, half, data);
  panels.pack(source, half, panels.panels(n), data);
  p.view = panels.packed_view(source, data);
  return p;
}

TEST(KquantPanels, AreTheFilesBytesAndValues) {
  for (const KquantType* type : all_types()) {
    SCOPED_TRACE(type->name());
    // The file's size, but for each superblock's padding to a cache line: Q6_K's 3,360 bytes to 3,392.
    const int64_t padding = kquant_superblock_bytes(type->code_bytes(), type->side_bytes()) - 16 * type->block_bytes();
    EXPECT_EQ(padding, type->code_bits() == 6 ? 32 : 0);
    EXPECT_EQ(type->panels_format().bytes(32, 512), type->blocks_format().bytes(32, 512) + 2 * 2 * padding);
    for (int64_t n : {1, 15, 16, 17, 40})
      for (int64_t k : {256, 768}) {  // odd superblock counts: Q6_K's superblocks padded to 64 bytes
        const Blocks w = make_blocks(*type, n, k, 31 * n + k);
        const Packed p = pack(*type, w.view);
        EXPECT_EQ(p.view.format, type->panels_id());
        std::vector<float> want(k), got(k);
        for (int64_t r = 0; r < n; ++r) {
          type->blocks_format().dequantize_row(w.view, r, want.data());
          type->panels_format().dequantize_row(p.view, r, got.data());
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), 4 * k)) << "n " << n << " k " << k << " row " << r;
          // And the unit gives the block's bytes back.
          const int64_t superblocks = k / kSuperblock;
          auto* panel = const_cast<std::byte*>(p.view.data) + r / kKquantPanelRows * kquant_panel_bytes(*type, k);
          std::vector<std::byte> block(static_cast<size_t>(type->block_bytes()));
          for (int64_t b = 0; b < superblocks; ++b) {
            kquant_panel_to_block(*type, kquant_superblock(*type, panel, b), r % kKquantPanelRows, block.data());
            ASSERT_EQ(0, std::memcmp(block.data(), w.bytes.data() + (r * superblocks + b) * type->block_bytes(),
                                     block.size()));
          }
        }
      }
  }
}

// The reference arithmetic is the exact product up to the activations' rounding: each input moves by
// at most half its group's step (amax / 254), so |y − Σ w · x| ≤ Σ_g amax_g / 254 · Σ_{i∈g} |w_i|,
// plus fp32 rounding (relative 2^-20 of Σ |w · x| is ample for 768 terms).
// The MTP head of a GGUF model drafts among a token map's rows (gather_rows: each row's blocks packed
// again) or the first N rows (read in place): both are the source rows, value for value and output for
// output, on the reference and this machine's kernels.
TEST(KquantPanels, GatheredAndLeadingRowsAreTheSourceRows) {
  RefBackend ref;
  CpuBackend cpu(detect_isa(), 2);
  const int64_t n = 70, k = 512;
  const std::vector<int32_t> rows{69, 3, 17, 0, 42, 16, 68, 5, 33, 1, 2, 50, 60, 61, 62, 63, 64, 7, 8};  // a partial panel
  const auto g_rows = static_cast<int64_t>(rows.size());
  for (const KquantType* type : all_types()) {
    SCOPED_TRACE(type->name());
    const WeightFormat& f = type->panels_format();
    ASSERT_TRUE(f.gatherable() && f.leading_rows_in_place());
    const Blocks w = make_blocks(*type, n, k, 9);
    const Packed p = pack(*type, w.view);
    std::vector<std::byte> storage(f.bytes(g_rows, k) + 64, std::byte{0x5a});  // not zero: padding must be written
    std::byte* data = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
    f.gather_rows(p.view, rows, data);
    TensorView gathered = p.view, leading = p.view;
    gathered.shape = {g_rows, k};
    gathered.data = data;
    gathered.nbytes = f.bytes(g_rows, k);
    leading.shape = {32, k};
    leading.nbytes = f.bytes(32, k);
    std::vector<float> want(k), got(k);  // [k] one row
    for (int64_t r = 0; r < g_rows; ++r) {
      f.dequantize_row(p.view, rows[static_cast<size_t>(r)], want.data());
      f.dequantize_row(gathered, r, got.data());
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), 4 * k)) << "gathered row " << r;
    }
    for (Backend* backend : {static_cast<Backend*>(&ref), static_cast<Backend*>(&cpu)})
      for (const int64_t m : {1, 5, 17}) {
        SCOPED_TRACE(str_cat(backend->name(), ", m ", m));
        Xoshiro256 rng(m);
        std::vector<float> x(m * k), full(m * n), part(m * g_rows), lead(m * 32);  // [m, k], [m, n], [m, rows], [m, 32]
        for (float& v : x) v = rng.uniform() * 2.0f - 1.0f;
        backend->matmul(x.data(), m, p.view, full.data(), true);
        backend->matmul(x.data(), m, gathered, part.data(), true);
        backend->matmul(x.data(), m, leading, lead.data(), true);
        for (int64_t t = 0; t < m; ++t) {
          for (int64_t i = 0; i < g_rows; ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>(part[t * g_rows + i]), std::bit_cast<uint32_t>(full[t * n + rows[static_cast<size_t>(i)]]))
                << "token " << t << ", gathered row " << i;
          ASSERT_EQ(0, std::memcmp(lead.data() + t * 32, full.data() + t * n, 4 * 32)) << "token " << t << ", leading rows";
        }
      }
  }
}

TEST(KquantPanels, ReferenceIsTheProductUpToActivationRounding) {
  RefBackend ref;
  const int64_t n = 20, k = 768, m = 3;
  for (const KquantType* type : all_types()) {
    SCOPED_TRACE(type->name());
    const Blocks w = make_blocks(*type, n, k, 5);
    const Packed p = pack(*type, w.view);
    Xoshiro256 rng(9);
    std::vector<float> x(m * k), y(m * n), row(k);  // [m, k], [m, n], [k]
    for (float& v : x) v = (rng.uniform() - 0.5f) * (rng.next() % 8 == 0 ? 20.0f : 1.0f);
    ref.matmul(x.data(), m, p.view, y.data(), false);
    for (int64_t c = 0; c < n; ++c) {
      type->blocks_format().dequantize_row(w.view, c, row.data());
      for (int64_t r = 0; r < m; ++r) {
        double exact = 0, magnitude = 0, bound = 0;
        for (int64_t g = 0; g < k / kKquantGroup; ++g) {
          double amax = 0, weights = 0;
          for (int64_t i = g * kKquantGroup; i < (g + 1) * kKquantGroup; ++i) {
            amax = std::max(amax, std::fabs(static_cast<double>(x[r * k + i])));
            weights += std::fabs(row[i]);
            exact += static_cast<double>(row[i]) * x[r * k + i];
            magnitude += std::fabs(static_cast<double>(row[i]) * x[r * k + i]);
          }
          bound += amax / 254.0 * weights;
        }
        EXPECT_LE(std::fabs(y[r * n + c] - exact), bound * 1.001 + magnitude * 1e-6) << "row " << c << " token " << r;
        EXPECT_GT(bound, 0.0);
      }
    }
  }
}

// The AMX-INT8, AVX-512 VNNI and AVX2 kernels; an ISA without a kernel falls back to the reference, which these
// tests would compare with itself — so they run on the ISAs with a kernel only, and say so otherwise.
class KquantKernels : public test::IsaTest {
 protected:
  void SetUp() override {
    test::IsaTest::SetUp();
    if (IsSkipped()) return;
    if (!q4_k_type().panels_format().fast_matmul(GetParam(), true))
      GTEST_SKIP() << "no K-quant kernel at " << isa_name(GetParam()) << " on this CPU: "
                   << "the reference runs there, and comparing it with itself would prove nothing";
  }
};

TEST_P(KquantKernels, BitIdenticalToTheReferenceForAnyBatchAndThreads) {
  RefBackend ref;
  CpuBackend one(GetParam(), 1), two(GetParam(), 2);
  const int64_t n = 37, k = 512;
  for (const KquantType* type : all_types()) {
    SCOPED_TRACE(type->name());
    const Blocks w = make_blocks(*type, n, k, 77);
    const Packed p = pack(*type, w.view);
    // The AVX2 tiles: 4, 3, 2 and 1 tokens; AVX-512: tiles of up to 8 tokens to 16 tokens, of 6 beyond;
    // AMX: 16-token tiles from 17 tokens on, then the rest.
    for (int64_t m : {1, 2, 3, 6, 8, 9, 15, 16, 17, 40, 48}) {
      Xoshiro256 rng(m);
      std::vector<float> x(m * k), want(m * n), got(m * n), alone(n);  // [m, k], [m, n], [m, n], [n]
      for (float& v : x) v = rng.uniform() * 2.0f - 1.0f;
      ref.matmul(x.data(), m, p.view, want.data(), true);
      two.matmul(x.data(), m, p.view, got.data(), true);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4)) << "m " << m << ", 2 threads";
      one.matmul(x.data(), m, p.view, got.data(), false);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4)) << "m " << m << ", 1 thread";
      two.matmul(x.data() + (m - 1) * k, 1, p.view, alone.data(), true);  // the last token alone
      ASSERT_EQ(0, std::memcmp(want.data() + (m - 1) * n, alone.data(), n * 4)) << "m " << m << ", last token alone";
    }
  }
}

// Long rows: the kernels walk the tokens in blocks that stay in L2 (the AMX kernel's: 1 MiB of
// codes, 64 tokens at k = 16,384), so a batch of 83 crosses a block boundary and ends in a partial tile.
TEST_P(KquantKernels, BitIdenticalAcrossTokenBlocks) {
  RefBackend ref;
  CpuBackend two(GetParam(), 2);
  const int64_t n = 20, k = 16384, m = 83;
  for (const KquantType* type : {&q4_k_type(), &q6_k_type()}) {  // one dot per group, and halves
    SCOPED_TRACE(type->name());
    const Blocks w = make_blocks(*type, n, k, 13);
    const Packed p = pack(*type, w.view);
    Xoshiro256 rng(21);
    std::vector<float> x(m * k), want(m * n), got(m * n);  // [m, k], [m, n], [m, n]
    for (float& v : x) v = rng.uniform() * 2.0f - 1.0f;
    ref.matmul(x.data(), m, p.view, want.data(), true);
    two.matmul(x.data(), m, p.view, got.data(), true);
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4));
  }
}

// Q6_K at its extremes: every code 0 (q − 32 = −32), every scale −128, every activation at the
// int8 limit, so each half's dot is −65,024 and a group's t = 16,646,144 — the largest, which the
// kernels compute in fp32 (exact below 2^24) where the reference sums int32.
TEST_P(KquantKernels, Q6KExtremesAreExact) {
  RefBackend ref;
  CpuBackend cpu(GetParam(), 2);
  const int64_t n = 16, k = 512, m = 17;  // AMX: a 16-token tile and one more
  const KquantType& type = q6_k_type();
  Blocks w;
  w.bytes.assign(static_cast<size_t>(n * (k / kSuperblock) * type.block_bytes()), std::byte{0});
  for (size_t at = 0; at < w.bytes.size(); at += static_cast<size_t>(type.block_bytes())) {
    for (int s = 0; s < 16; ++s) w.bytes[at + 192 + static_cast<size_t>(s)] = std::byte{0x80};  // scales: −128
    const uint16_t d = float_to_fp16(0.25f);
    std::memcpy(&w.bytes[at + 208], &d, 2);
  }
  w.view = TensorView{"Q6_K extremes", DType::U8, {n, k}, w.bytes.data(), w.bytes.size(), type.blocks_id()};
  const Packed p = pack(type, w.view);
  std::vector<float> x(m * k, 1.0f), want(m * n), got(m * n);  // [m, k], [m, n], [m, n]
  for (int64_t r = 0; r < m; ++r) x[static_cast<size_t>(r * k)] = -1.0f - static_cast<float>(r);  // a row's own scale
  ref.matmul(x.data(), m, p.view, want.data(), true);
  cpu.matmul(x.data(), m, p.view, got.data(), true);
  EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4));
}

// Weights of several types sharing one input (a Q4_K_M layer mixes Q4_K and Q6_K) go through one
// preparation of the activations, each with its own kernel.
TEST_P(KquantKernels, MixedTypesShareTheirActivations) {
  RefBackend ref;
  CpuBackend cpu(GetParam(), 2);
  const int64_t k = 256, m = 5;
  std::vector<Blocks> blocks;
  std::vector<Packed> packed;
  for (const KquantType* type : all_types()) {
    blocks.push_back(make_blocks(*type, 24 + static_cast<int64_t>(blocks.size()), k, 3 + blocks.size()));
    packed.push_back(pack(*type, blocks.back().view));
  }
  Xoshiro256 rng(4);
  std::vector<float> x(m * k);  // [m, k]
  for (float& v : x) v = rng.uniform() - 0.5f;
  std::vector<std::vector<float>> want(packed.size()), got(packed.size());
  std::vector<Backend::MatmulOutput> outputs;
  for (size_t i = 0; i < packed.size(); ++i) {
    want[i].resize(static_cast<size_t>(m * packed[i].view.shape[0]));
    got[i].resize(want[i].size());
    ref.matmul(x.data(), m, packed[i].view, want[i].data(), true);
    outputs.push_back({&packed[i].view, got[i].data()});
  }
  cpu.matmuls(x.data(), m, outputs, true);
  for (size_t i = 0; i < packed.size(); ++i)
    EXPECT_EQ(0, std::memcmp(want[i].data(), got[i].data(), want[i].size() * 4)) << all_types()[i]->name();
}

INSTANTIATE_TEST_SUITE_P(Isas, KquantKernels, ::testing::Values(Isa::avx2, Isa::avx512, Isa::amx), test::isa_param_name);

}  // namespace
}  // namespace ds::kquant_format_test

namespace ds::kquant_format_test {
namespace {

// deltaserve's own quantisers (`--weights q4_k`, its GGUF files): on Gaussian rows with outliers, the
// worst relative RMS error per superblock stays within 10% above what was measured when they were
// written (0.112, 0.053, 0.031: the outliers stretch a group's grid),
// and panels packed from fp32 rows are those rows' blocks.
TEST(KquantQuantisers, ErrorFitsTheirBits) {
  const int64_t k = 4096;
  Xoshiro256 rng(11);
  std::vector<float> w(k), back(kSuperblock);  // [k], [256]
  for (float& v : w) {
    // Box–Muller, with an outlier of 8 σ now and then (real weights have them).
    const float u = std::max(rng.uniform(), 1e-7f), v2 = rng.uniform();
    v = std::sqrt(-2.0f * std::log(u)) * std::cos(6.2831853f * v2) * (rng.next() % 64 == 0 ? 8.0f : 1.0f) * 0.02f;
  }
  for (const auto& [type, bound] : {std::pair{&q4_k_type(), 0.123}, std::pair{&q5_k_type(), 0.058}, std::pair{&q6_k_type(), 0.034}}) {
    ASSERT_TRUE(type->quantizes());
    std::vector<std::byte> block(static_cast<size_t>(type->block_bytes()));
    double worst = 0;
    for (int64_t b = 0; b < k / kSuperblock; ++b) {
      const float* x = w.data() + b * kSuperblock;
      type->quantize(x, block.data());
      type->dequantize(block.data(), back.data());
      double error = 0, energy = 0;
      for (int64_t i = 0; i < kSuperblock; ++i) error += (back[i] - x[i]) * (back[i] - x[i]), energy += x[i] * x[i];
      worst = std::max(worst, std::sqrt(error / energy));
    }
    EXPECT_LE(worst, bound) << type->name();
    std::printf("%s: worst relative RMS error per superblock %.4f\n", type->name(), worst);
  }
  EXPECT_FALSE(iq4_xs_type().quantizes());
}

TEST(KquantQuantisers, PanelsFromFp32RowsAreTheirBlocks) {
  const int64_t n = 19, k = 512;
  Xoshiro256 rng(12);
  std::vector<float> rows(n * k);  // [n, k]
  for (float& v : rows) v = (rng.uniform() - 0.5f) * 0.1f;
  const TensorView source{"fp32 weight", DType::F32, {n, k}, reinterpret_cast<const std::byte*>(rows.data()), rows.size() * 4};
  for (const KquantType* type : {&q4_k_type(), &q5_k_type(), &q6_k_type()}) {
    SCOPED_TRACE(type->name());
    Blocks blocks;
    blocks.bytes.resize(static_cast<size_t>(n * k / kSuperblock * type->block_bytes()));
    for (int64_t b = 0; b < n * k / kSuperblock; ++b) type->quantize(rows.data() + b * kSuperblock, blocks.bytes.data() + b * type->block_bytes());
    blocks.view = TensorView{"blocks", DType::U8, {n, k}, blocks.bytes.data(), blocks.bytes.size(), type->blocks_id()};
    const Packed from_rows = pack(*type, source), from_blocks = pack(*type, blocks.view);
    ASSERT_EQ(0, std::memcmp(from_rows.view.data, from_blocks.view.data, type->panels_format().bytes(n, k)));
  }
}

}  // namespace
}  // namespace ds::kquant_format_test
