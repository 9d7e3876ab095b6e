// The Q8_0 format (kernels/formats/q8_0/): the reference dequantisation on hand-made blocks (every q
// from −128 to 127, fp16 scales of every magnitude class), and the load-time route into int8 panels:
// lossless (the panels' values equal the blocks' bit for bit, −128 included), and the int8 kernels on
// the result equal the int8 reference bit for bit on every ISA this machine has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "isa_test.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/formats/int8_panels/int8_panels_format.h"
#include "kernels/formats/q8_0/q8_0_format.h"
#include "kernels/ref/ref_backend.h"
#include "util/float16.h"
#include "util/random.h"

namespace ds {
namespace {

struct Q8_0Weights {
  std::vector<std::byte> bytes;  // [n, k / 32] blocks of 34 bytes
  TensorView view;
};

// Random blocks: q uniform over [−128, 127] (so −128 appears), d a random fp16 in [2^-14, 4).
Q8_0Weights make_q8_0(int64_t n, int64_t k, uint64_t seed) {
  Q8_0Weights w;
  w.bytes.resize(static_cast<size_t>(n * (k / kQ8_0Block) * kQ8_0BlockBytes));
  Xoshiro256 rng(seed);
  for (size_t b = 0; b < w.bytes.size(); b += kQ8_0BlockBytes) {
    const uint16_t d = float_to_fp16(std::ldexp(1.0f + rng.uniform(), -14 + static_cast<int>(rng.next() % 16)));
    std::memcpy(&w.bytes[b], &d, 2);
    for (int i = 0; i < kQ8_0Block; ++i) w.bytes[b + 2 + i] = static_cast<std::byte>(rng.next() % 256);
  }
  w.bytes[2] = std::byte{0x80};  // −128 in the first block for sure
  w.view = TensorView{"q8_0", DType::U8, {n, k}, w.bytes.data(), w.bytes.size(), WeightFormatId::q8_0};
  return w;
}

TEST(Q8_0Format, DequantizesEveryValueAndScale) {
  std::vector<std::byte> block(kQ8_0BlockBytes);
  for (uint32_t d_bits : {0x0001u, 0x03ffu, 0x0400u, 0x3c00u, 0x7bffu, 0xbc00u}) {  // subnormal .. max, negative
    const auto bits = static_cast<uint16_t>(d_bits);
    std::memcpy(block.data(), &bits, 2);
    for (int base = -128; base < 128; base += kQ8_0Block) {
      for (int i = 0; i < kQ8_0Block; ++i) block[2 + i] = static_cast<std::byte>(static_cast<int8_t>(base + i));
      float out[kQ8_0Block];
      q8_0_dequantize_block(block.data(), out);
      for (int i = 0; i < kQ8_0Block; ++i)
        ASSERT_EQ(out[i], fp16_to_float(bits) * static_cast<float>(base + i)) << "d " << d_bits << " q " << base + i;
    }
  }
}

std::vector<std::byte> pack_route(const TensorView& source, int64_t n, int64_t k, TensorView* packed_view) {
  const WeightFormat& route = q8_0_int8_panels_route();
  std::vector<std::byte> packed(route.bytes(n, k) + 64);
  std::byte* data = packed.data() + (64 - reinterpret_cast<uintptr_t>(packed.data()) % 64) % 64;
  route.pack(source, 0, route.panels(n), data);
  *packed_view = route.packed_view(source, data);
  return packed;
}

TEST(Q8_0Format, Int8PanelsRouteIsLossless) {
  for (int64_t n : {1, 31, 32, 33, 70})
    for (int64_t k : {32, 64, 96, 160}) {
      const Q8_0Weights w = make_q8_0(n, k, 7 * n + k);
      TensorView packed;
      const auto storage = pack_route(w.view, n, k, &packed);
      EXPECT_EQ(packed.format, WeightFormatId::int8_panels);
      std::vector<float> want(k), got(k);
      for (int64_t r = 0; r < n; ++r) {
        q8_0_format().dequantize_row(w.view, r, want.data());
        int8_panels_format().dequantize_row(packed, r, got.data());
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), 4 * k)) << "n " << n << " k " << k << " row " << r;
      }
    }
}

class Q8_0Int8Kernels : public test::IsaTest {};

TEST_P(Q8_0Int8Kernels, RunTheRouteBitIdenticalToTheInt8Reference) {
  RefBackend ref;
  CpuBackend cpu(GetParam(), 2);
  for (int64_t planes : {1, 2})
    for (int64_t m : {1, 5, 33}) {
      const int64_t n = 45, k = 96;
      const Q8_0Weights w = make_q8_0(n, k, 99 + m);
      TensorView packed;
      const auto storage = pack_route(w.view, n, k, &packed);
      packed.activation_planes = planes;
      Xoshiro256 rng(m);
      std::vector<float> x(m * k), want(m * n), got(m * n);  // [m, k], [m, n], [m, n]
      for (float& v : x) v = rng.uniform() * 2.0f - 1.0f;
      ref.matmul(x.data(), m, packed, want.data(), true);
      cpu.matmul(x.data(), m, packed, got.data(), true);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4)) << "planes " << planes << " m " << m;
    }
}

INSTANTIATE_TEST_SUITE_P(Isas, Q8_0Int8Kernels, ::testing::Values(Isa::avx2, Isa::avx512), test::isa_param_name);

// The q8_0 format as stored runs the reference matmul: the dequantised rows times fp32 inputs.
TEST(Q8_0Format, StoredBlocksComputeThroughTheReference) {
  const int64_t n = 9, k = 64, m = 3;
  const Q8_0Weights w = make_q8_0(n, k, 5);
  std::vector<float> x(m * k), got(m * n), row(k);  // [m, k], [m, n], [k]
  Xoshiro256 rng(3);
  for (float& v : x) v = rng.uniform() - 0.5f;
  RefBackend ref;
  ref.matmul(x.data(), m, w.view, got.data(), false);
  for (int64_t c = 0; c < n; ++c) {
    q8_0_format().dequantize_row(w.view, c, row.data());
    for (int64_t r = 0; r < m; ++r) {
      float acc = 0;
      for (int64_t i = 0; i < k; ++i) acc += x[r * k + i] * row[i];
      EXPECT_EQ(got[r * n + c], acc);
    }
  }
}

}  // namespace
}  // namespace ds
