// CpuBackend: hand-written matmul kernels (bf16 panels, int8 VNNI, row-major fallbacks), threaded
// with each thread on one contiguous range of weight rows; the token mixers, norms and element-wise
// ops run this ISA's build of the portable kernels, split over threads by heads, channels or rows;
// embedding, DeltaNet gates and KV writes (copies or tiny) run the scalar reference.
#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/portable_kernels.h"
#include "kernels/bf16_panels.h"
#include "kernels/int8_panels.h"
#include "util/check.h"
#include "util/float16.h"
#include "util/str_cat.h"

namespace ds {

CpuBackend::CpuBackend(Isa isa, int threads)
    : isa_(isa),
      pool_(threads),
      name_(str_cat("cpu ", isa_name(isa), ", ", threads, " thread(s)")),
      portable_(isa == Isa::avx512 ? &kernels::portable_kernels_avx512()
                : isa == Isa::avx2 ? &kernels::portable_kernels_avx2()
                                   : nullptr),
      vnni_(isa == Isa::avx512 && has_avx512_vnni()),
      delta_scratch_(static_cast<size_t>(threads)),
      thread_buffers_(static_cast<size_t>(threads)) {
  // A decode step's attention scores grow with the context (one more key block every 64 tokens):
  // with the whole budget reserved up front, growing them never allocates. Reserved pages are not
  // touched, so this costs address space, not memory, until a long context uses them.
  for (std::vector<float>& buffer : thread_buffers_) buffer.reserve(static_cast<size_t>(kernels::kAttentionScratchBudget));
}

void CpuBackend::matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) {
  if (isa_ == Isa::scalar) return ref_.matmul(x, m, w, y, round_input_bf16);
  const MatmulOutput output{&w, y};
  if (w.dtype == DType::I8) return matmul_int8(x, m, std::span(&output, 1));  // int8 activations either way
  if (w.layout == WeightLayout::bf16_panels)
    return matmuls(x, m, std::span(&output, 1), round_input_bf16);  // does not come back here for panels
  const int64_t n = w.shape[0], k = w.shape[1];
  const auto count = static_cast<size_t>(m * k);
  if (isa_ == Isa::avx512 && round_input_bf16 && w.dtype == DType::BF16) {
    if (bf16_input_.size() < count) bf16_input_.resize(count);
    kernels::round_to_bf16_avx512(x, m * k, bf16_input_.data());
    pool_.run([&](int t, int threads) {
      const auto [begin, end] = ThreadPool::range(n, t, threads, 16);
      if (begin < end) kernels::matmul_bf16_avx512(bf16_input_.data(), m, w, begin, end, y);
    });
    return;
  }
  const float* input = x;
  if (round_input_bf16) {  // fast mode on non-bf16 weights or without AVX-512 BF16
    if (rounded_input_.size() < count) rounded_input_.resize(count);
    for (size_t i = 0; i < count; ++i) rounded_input_[i] = bf16_to_float(float_to_bf16(x[i]));
    input = rounded_input_.data();
  }
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(n, t, threads, 16);
    if (begin >= end) return;
    if (isa_ == Isa::avx512) kernels::matmul_f32_avx512(input, m, w, begin, end, y);
    else kernels::matmul_f32_avx2(input, m, w, begin, end, y);
  });
}

namespace {

// Runs kernel(output, first, end) for panels [first, end) of each output, each thread on one
// contiguous range of all the outputs' panels concatenated in order (one stream per thread in
// decode, and 1-panel outputs leave no thread idle). panels(rows): an output's panel count.
template <typename Kernel>
void run_over_panels(ThreadPool& pool, std::span<const Backend::MatmulOutput> outputs, int64_t (*panels)(int64_t),
                     const Kernel& kernel) {
  int64_t total = 0;
  for (const Backend::MatmulOutput& out : outputs) total += panels(out.w->shape[0]);
  pool.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(total, t, threads);
    int64_t first = 0;  // the current output's first panel in the concatenation
    for (const Backend::MatmulOutput& out : outputs) {
      const int64_t count = panels(out.w->shape[0]);
      const int64_t lo = std::max(begin, first), hi = std::min(end, first + count);
      if (lo < hi) kernel(out, lo - first, hi - first);
      first += count;
    }
  });
}

}  // namespace

// Below this many floats of work an op runs on the calling thread: a hand-off costs more.
constexpr int64_t kParallelFloats = 1 << 14;

void CpuBackend::matmuls(const float* x, int64_t m, std::span<const MatmulOutput> outputs, bool round_input_bf16) {
  if (isa_ == Isa::scalar) {
    for (const MatmulOutput& out : outputs) ref_.matmul(x, m, *out.w, out.y, round_input_bf16);
    return;
  }
  // The loader packs weights only for fast mode on AVX-512 BF16 (runs_bf16_panels); anything else
  // (fp32 activations, a forced narrower ISA) reads panels through the reference, element-wise.
  auto is_panels = [](const MatmulOutput& out) { return out.w->layout == WeightLayout::bf16_panels; };
  const bool panel_kernel = isa_ == Isa::avx512 && round_input_bf16;
  if (panel_kernel && std::all_of(outputs.begin(), outputs.end(), is_panels)) return matmul_bf16_panels(x, m, outputs);
  // Otherwise output by output, but int8 neighbours with the same activation width share one call.
  auto same_int8 = [](const MatmulOutput& a, const MatmulOutput& b) {
    return a.w->dtype == DType::I8 && b.w->dtype == DType::I8 && a.w->activation_planes == b.w->activation_planes;
  };
  for (size_t i = 0, end = 1; i < outputs.size(); i = end++) {
    while (end < outputs.size() && same_int8(outputs[i], outputs[end])) ++end;
    const MatmulOutput& out = outputs[i];
    if (out.w->dtype == DType::I8) matmul_int8(x, m, outputs.subspan(i, end - i));
    else if (is_panels(out) && !panel_kernel) ref_.matmul(x, m, *out.w, out.y, round_input_bf16);
    else matmul(x, m, *out.w, out.y, round_input_bf16);  // panels come back as one output
  }
}

void CpuBackend::matmul_bf16_panels(const float* x, int64_t m, std::span<const MatmulOutput> outputs) {
  const int64_t k = outputs[0].w->shape[1];
  for (const MatmulOutput& out : outputs)
    DS_CHECK(out.w->shape[1] == k, "matmuls sharing an input need the same k: ", out.w->name, " has ", out.w->shape[1],
             ", expected ", k);
  const auto words = static_cast<size_t>(kernels::bf16_activation_words(m, k));
  if (bf16_tiles_.size() < words) bf16_tiles_.resize(words);
  uint32_t* tiles = bf16_tiles_.data();
  // Rows are rounded and placed independently, so splitting them over threads changes no bit.
  run_ranges(m, m * k, 1, [&](int64_t begin, int64_t end, std::vector<float>&) {
    kernels::pack_bf16_activations_avx512(x, m, k, begin, end, tiles);
  });
  run_over_panels(pool_, outputs, bf16_panels, [&](const MatmulOutput& out, int64_t begin, int64_t end) {
    kernels::matmul_bf16_panels_avx512(tiles, m, *out.w, begin, end, out.y);
  });
}

void CpuBackend::matmul_int8(const float* x, int64_t m, std::span<const MatmulOutput> outputs) {
  const TensorView& first = *outputs[0].w;
  const int64_t k = first.shape[1], groups = int8_groups(k), planes = first.activation_planes;
  DS_CHECK(planes == 1 || planes == 2, "activation planes ", planes, " of ", first.name);
  for (const MatmulOutput& out : outputs)
    DS_CHECK(out.w->shape[1] == k && out.w->activation_planes == planes, "int8 matmuls sharing an input need the same k ",
             "and activation planes: ", out.w->name, " has ", out.w->shape[1], " and ", out.w->activation_planes,
             ", expected ", k, " and ", planes);
  auto grow = [](auto& buffer, int64_t size) {
    if (buffer.size() < static_cast<size_t>(size)) buffer.resize(static_cast<size_t>(size));
  };
  grow(int8_input_, m * planes * groups * kInt8ScaleGroup);
  grow(int8_scales_, m * groups);
  grow(int8_offsets_, m * planes * groups);
  const Int8Activations a{int8_input_.data(), int8_scales_.data(), int8_offsets_.data(), groups, planes};
  auto quantize = vnni_ ? kernels::quantize_activations_avx512 : kernels::quantize_activations_avx2;
  auto kernel = vnni_ ? kernels::matmul_int8_avx512 : kernels::matmul_int8_avx2;
  // Rows are quantised independently, so splitting them over threads changes no bit.
  run_ranges(m, m * k, 1, [&](int64_t begin, int64_t end, std::vector<float>&) { quantize(x, k, begin, end, a); });
  run_over_panels(pool_, outputs, int8_panels, [&](const MatmulOutput& out, int64_t begin, int64_t end) {
    kernel(a, m, *out.w, begin, end, out.y);
  });
}

void CpuBackend::rms_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, float eps, float* out) {
  if (isa_ == Isa::scalar) return ref_.rms_norm(x, rows, dim, w, eps, out);
  auto kernel = portable_->rms_norm;
  run_ranges(rows, rows * dim, 1, [&](int64_t begin, int64_t end, std::vector<float>& buffer) {
    if (buffer.size() < static_cast<size_t>(dim)) buffer.resize(static_cast<size_t>(dim));
    kernel(x, dim, w, eps, out, begin, end, buffer.data());
  });
}

void CpuBackend::rms_norm_gated(const float* x, const float* z, int64_t rows, int64_t dim, const TensorView& w,
                                float eps, float* out) {
  if (isa_ == Isa::scalar) return ref_.rms_norm_gated(x, z, rows, dim, w, eps, out);
  auto kernel = portable_->rms_norm_gated;
  run_ranges(rows, rows * dim, 1, [&](int64_t begin, int64_t end, std::vector<float>& buffer) {
    if (buffer.size() < static_cast<size_t>(dim)) buffer.resize(static_cast<size_t>(dim));
    kernel(x, z, dim, w, eps, out, begin, end, buffer.data());
  });
}

void CpuBackend::silu_mul(const float* gate, const float* up, int64_t n, float* out) {
  if (isa_ == Isa::scalar) return ref_.silu_mul(gate, up, n, out);
  auto kernel = portable_->silu_mul;
  run_ranges(n, n, 16, [&](int64_t begin, int64_t end, std::vector<float>&) { kernel(gate, up, out, begin, end); });
}

void CpuBackend::sigmoid_gate(float* x, const float* gate, int64_t n) {
  if (isa_ == Isa::scalar) return ref_.sigmoid_gate(x, gate, n);
  auto kernel = portable_->sigmoid_gate;
  run_ranges(n, n, 16, [&](int64_t begin, int64_t end, std::vector<float>&) { kernel(x, gate, begin, end); });
}

void CpuBackend::add(float* x, const float* y, int64_t n) {
  if (isa_ == Isa::scalar) return ref_.add(x, y, n);
  auto kernel = portable_->add;
  run_ranges(n, n, 16, [&](int64_t begin, int64_t end, std::vector<float>&) { kernel(x, y, begin, end); });
}

void CpuBackend::rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const RopeAngles& angles) {
  if (isa_ == Isa::scalar) return ref_.rope(x, tokens, heads, head_dim, angles);
  auto kernel = portable_->rope;
  run_ranges(tokens, tokens * heads * head_dim, 1,
             [&](int64_t begin, int64_t end, std::vector<float>&) { kernel(x, heads, head_dim, angles, begin, end); });
}

void CpuBackend::run_ranges(int64_t count, int64_t work, int64_t align,
                            FunctionRef<void(int64_t, int64_t, std::vector<float>&)> fn) {
  if (work < kParallelFloats || pool_.size() == 1) return fn(0, count, thread_buffers_[0]);
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(count, t, threads, align);
    if (begin < end) fn(begin, end, thread_buffers_[t]);
  });
}

// One memcpy on the calling thread: splitting a 2B snapshot (19.3 MiB) over two threads measured
// the same here (take 2.1–2.5 ms, restore 2.0–2.3 ms either way, docs/benchmarks.md): one core's
// copy stream already meets what the memory gives two.
void CpuBackend::copy(void* dst, const void* src, uint64_t bytes) { std::memcpy(dst, src, bytes); }

// Small or copy-bound ops: the scalar reference.
void CpuBackend::embedding(const int32_t* ids, int64_t n, const TensorView& table, float* out) {
  ref_.embedding(ids, n, table, out);
}
void CpuBackend::deltanet_gates(const float* a, const float* b, int64_t n, int64_t heads, const TensorView& A_log,
                                const TensorView& dt_bias, float* g, float* beta) {
  ref_.deltanet_gates(a, b, n, heads, A_log, dt_bias, g, beta);
}
void CpuBackend::kv_write(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
                          const KvLayerView& kv) {
  ref_.kv_write(k, v, n, start_pos, block_table, kv);
}
// Value heads are independent: each thread runs a contiguous range of heads.
void CpuBackend::gated_delta_rule_chunked(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                          const float* g, const float* beta, int64_t n, const DeltaNetShape& shape,
                                          float* state, float* out) {
  if (isa_ == Isa::scalar) return ref_.gated_delta_rule_chunked(q, k, v, qkv_stride, g, beta, n, shape, state, out);
  auto kernel = portable_->delta_chunked;
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(shape.num_v_heads, t, threads);
    if (begin >= end) return;
    delta_scratch_[t].size_for(shape);
    kernel(q, k, v, qkv_stride, g, beta, n, shape, state, out, begin, end, delta_scratch_[t]);
  });
}

void CpuBackend::gated_delta_rule_recurrent(const float* q, const float* k, const float* v, int64_t qkv_stride,
                                            const float* g, const float* beta, int64_t n, const DeltaNetShape& shape,
                                            float* state, float* out) {
  if (isa_ == Isa::scalar) return ref_.gated_delta_rule_recurrent(q, k, v, qkv_stride, g, beta, n, shape, state, out);
  auto kernel = portable_->delta_recurrent;
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(shape.num_v_heads, t, threads);
    if (begin >= end) return;
    delta_scratch_[t].size_for(shape);
    kernel(q, k, v, qkv_stride, g, beta, n, shape, state, out, begin, end, delta_scratch_[t]);
  });
}

// Channels are independent: each thread runs a contiguous, 16-aligned range of channels.
void CpuBackend::causal_conv1d_silu(const float* x, int64_t n, int64_t channels, const TensorView& w, float* state,
                                    float* out) {
  if (isa_ == Isa::scalar) return ref_.causal_conv1d_silu(x, n, channels, w, state, out);
  auto kernel = portable_->conv;
  const int64_t kernel_size = w.shape[2];
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(channels, t, threads, 16);
    if (begin >= end) return;
    std::vector<float>& buffer = thread_buffers_[t];
    const auto needed = static_cast<size_t>((2 * kernel_size - 1) * (end - begin));
    if (buffer.size() < needed) buffer.resize(needed);
    kernel(x, n, channels, w, state, out, begin, end, buffer.data(), buffer.data() + kernel_size * (end - begin));
  });
}

// Query heads are independent: each thread runs a contiguous range of heads over all tokens (with
// 8 heads on 2 threads, one GQA group each, so each thread streams only its own kv head).
void CpuBackend::attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                           const KvLayerView& kv, float scale, float* out) {
  if (isa_ == Isa::scalar) return ref_.attention(q, n, start_pos, num_heads, block_table, kv, scale, out);
  auto kernel = portable_->attention;
  const int64_t scores_floats = kernels::attention_scratch_floats(n, start_pos, num_heads / kv.num_kv_heads);
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(num_heads, t, threads);
    if (begin >= end) return;
    std::vector<float>& scores = thread_buffers_[t];
    if (scores.size() < static_cast<size_t>(scores_floats)) scores.resize(static_cast<size_t>(scores_floats));
    kernel(q, n, start_pos, num_heads, block_table, kv, scale, out, begin, end, scores.data(), scores_floats);
  });
}

}  // namespace ds
