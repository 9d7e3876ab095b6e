// Int8 quantisation of the matmul weights at load time (symmetric scales per group of a row), packed
// into the kernels' panel layout.
#include "model/quantize.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "kernels/int8_panels.h"
#include "kernels/weight_access.h"
#include "util/check.h"
#include "util/parallel_for.h"

namespace ds {

void QuantizedStore::Free::operator()(std::byte* p) const { std::free(p); }

namespace {

// Drops the resident pages of a mapped range (whole pages inside it only); the file stays mapped.
uint64_t release_pages(const TensorView& view) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(view.data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(view.data) + view.nbytes) / page * page;
  if (end <= begin) return 0;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  return end - begin;
}

// Quantises w into `packed` (int8_packed_bytes of its shape, 64-byte aligned); each thread packs
// whole panels (disjoint bytes), padding included.
TensorView quantize(const TensorView& w, std::byte* packed, int threads) {
  const int64_t rows = w.shape[0], cols = w.shape[1], groups = int8_groups(cols);
  parallel_for(static_cast<size_t>(int8_panels(rows)), threads, [&](size_t begin, size_t end) {
    std::vector<float> row(static_cast<size_t>(cols));
    std::vector<int8_t> q(static_cast<size_t>(groups * kInt8Group), 0);
    std::vector<float> scales(static_cast<size_t>(groups));
    const auto panel_bytes = static_cast<size_t>(int8_panel_bytes(cols));
    int8_clear_packed(packed + begin * panel_bytes, static_cast<int64_t>(end - begin) * kInt8PanelRows, cols);
    const int64_t first = static_cast<int64_t>(begin) * kInt8PanelRows;
    const int64_t last = std::min(rows, static_cast<int64_t>(end) * kInt8PanelRows);
    for (int64_t r = first; r < last; ++r) {
      weight_span(w, r * cols, cols, row.data());
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t lo = g * kInt8Group, hi = std::min(cols, lo + kInt8Group);
        float max_abs = 0.0f;
        for (int64_t c = lo; c < hi; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
        const float scale = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
        scales[g] = scale;
        // round-to-nearest-even of the clamped quotient, as std::nearbyint, by the 1.5 · 2^23 trick
        // (exact for |v| < 2^22) so that the loop vectorises: loading 2B took 10–15 s with the libm call
        constexpr float kRound = 12582912.0f;
        for (int64_t c = lo; c < hi; ++c) {
          const float v = std::clamp(row[c] / scale, -127.0f, 127.0f);
          q[c] = static_cast<int8_t>(static_cast<int32_t>((v + kRound) - kRound));
        }
      }
      int8_pack_row(packed, cols, r, q.data(), scales.data());
    }
  });
  return TensorView{w.name + " (int8)", DType::I8, w.shape, packed, static_cast<uint64_t>(int8_packed_bytes(rows, cols)),
                    kInt8Group};
}

}  // namespace

uint64_t quantize_weights_int8(Qwen35Weights& weights, QuantizedStore& store, int threads) {
  struct Job {
    TensorView* view;
    bool release;  // a tied head shares its bytes with the embedding table, which lookups still read
    uint64_t offset;
    int64_t activation_planes = 1;
  };
  std::vector<Job> jobs;
  for (DecoderLayerWeights& layer : weights.layers) {
    if (layer.type == LayerType::full_attention) {
      for (TensorView* w : {&layer.attention.q_proj, &layer.attention.k_proj, &layer.attention.v_proj, &layer.attention.o_proj})
        jobs.push_back({w, true, 0});
    } else {
      // The DeltaNet's q / k / v, output gate z and output projection get 16-bit activations: their
      // errors enter a recurrent state that carries them over the whole sequence. On the 2B shape's
      // 512-token run int8 activations there took mean KL to bf16 from 0.0075 (weight-only int8) to
      // 0.017; int8 activations on every other matmul cost little (docs/numerics.md).
      GatedDeltaNetWeights& d = layer.deltanet;
      for (TensorView* w : {&d.in_proj_qkv, &d.in_proj_z, &d.out_proj}) jobs.push_back({w, true, 0, 2});
      for (TensorView* w : {&d.in_proj_b, &d.in_proj_a}) jobs.push_back({w, true, 0});
    }
    // down_proj too: its input (SiLU(gate) · up) has the widest range of any matmul input, and
    // 16-bit activations there bring the 2B run's mean KL from 0.0105 to 0.0089 (≤ 0.01, the
    // target) for about 13% more prefill matmul time (measured with the others above).
    for (TensorView* w : {&layer.mlp.gate_proj, &layer.mlp.up_proj}) jobs.push_back({w, true, 0});
    jobs.push_back({&layer.mlp.down_proj, true, 0, 2});
  }
  jobs.push_back({&weights.lm_head, !weights.tied, 0});
  // One arena for all weights, in 2 MiB pages where the kernel grants them: a decode step streams
  // every byte, and with 4 KiB pages the TLB misses and page-bounded hardware prefetch cost ~15–25%
  // of the read rate (measured on the 2B layer shapes). Packed sizes are multiples of 64 bytes.
  uint64_t total = 0;
  for (Job& job : jobs) {
    job.offset = total;
    total += static_cast<uint64_t>(int8_packed_bytes(job.view->shape[0], job.view->shape[1]));
  }
  constexpr uint64_t kHugePage = 2 << 20;
  const uint64_t reserved = std::max<uint64_t>(kHugePage, (total + kHugePage - 1) / kHugePage * kHugePage);
  auto* arena = static_cast<std::byte*>(std::aligned_alloc(kHugePage, reserved));
  DS_CHECK(arena != nullptr, "out of memory for ", total, " bytes of int8 weights");
  madvise(arena, reserved, MADV_HUGEPAGE);  // advice only: 4 KiB pages still work
  store.buffers.emplace_back(arena);
  store.bytes = total;
  uint64_t released = 0;
  for (const Job& job : jobs) {
    const TensorView source = *job.view;
    *job.view = quantize(source, arena + job.offset, threads);
    job.view->activation_planes = job.activation_planes;
    if (job.release) released += release_pages(source);
  }
  return released;
}

}  // namespace ds
