// Int8 quantisation of the matmul weights at load time (symmetric scales per group of a row).
#include "model/quantize.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>

#include "kernels/weight_access.h"
#include "util/parallel_for.h"

namespace ds {
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

TensorView quantize(const TensorView& w, QuantizedStore& store, int threads) {
  const int64_t rows = w.shape[0], cols = w.shape[1], groups = (cols + kInt8Group - 1) / kInt8Group;
  auto values = std::make_unique<int8_t[]>(static_cast<size_t>(rows * cols));
  auto scales = std::make_unique<float[]>(static_cast<size_t>(rows * groups));
  parallel_for(static_cast<size_t>(rows), threads, [&](size_t begin, size_t end) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (auto r = static_cast<int64_t>(begin); r < static_cast<int64_t>(end); ++r) {
      weight_span(w, r * cols, cols, row.data());
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t first = g * kInt8Group, last = std::min(cols, first + kInt8Group);
        float max_abs = 0.0f;
        for (int64_t c = first; c < last; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
        const float scale = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
        scales[r * groups + g] = scale;
        for (int64_t c = first; c < last; ++c)
          values[r * cols + c] = static_cast<int8_t>(std::clamp(std::nearbyint(row[c] / scale), -127.0f, 127.0f));
      }
    }
  });
  TensorView view{w.name + " (int8)", DType::I8, w.shape, reinterpret_cast<const std::byte*>(values.get()),
                  static_cast<uint64_t>(rows * cols), scales.get(), kInt8Group};
  store.bytes += static_cast<uint64_t>(rows * cols) + static_cast<uint64_t>(rows * groups) * sizeof(float);
  store.values.push_back(std::move(values));
  store.scales.push_back(std::move(scales));
  return view;
}

}  // namespace

uint64_t quantize_weights_int8(Qwen35Weights& weights, QuantizedStore& store, int threads) {
  uint64_t released = 0;
  auto convert = [&](TensorView& view, bool release) {
    const TensorView source = view;
    view = quantize(source, store, threads);
    if (release) released += release_pages(source);
  };
  for (DecoderLayerWeights& layer : weights.layers) {
    if (layer.type == LayerType::full_attention) {
      for (TensorView* w : {&layer.attention.q_proj, &layer.attention.k_proj, &layer.attention.v_proj, &layer.attention.o_proj})
        convert(*w, true);
    } else {
      GatedDeltaNetWeights& d = layer.deltanet;
      for (TensorView* w : {&d.in_proj_qkv, &d.in_proj_z, &d.in_proj_b, &d.in_proj_a, &d.out_proj}) convert(*w, true);
    }
    for (TensorView* w : {&layer.mlp.gate_proj, &layer.mlp.up_proj, &layer.mlp.down_proj}) convert(*w, true);
  }
  // A tied head shares its bytes with the embedding table, which lookups still read.
  convert(weights.lm_head, !weights.tied);
  return released;
}

}  // namespace ds
