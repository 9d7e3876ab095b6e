// CpuBackend: each weight format's matmul kernels (kernels/formats/) threaded with each thread on
// one contiguous range of weight rows; the token mixers, norms and element-wise
// ops run this ISA's build of the portable kernels, split over threads by heads, channels or rows;
// the vision tower's LayerNorm, bias, GELU and tiled bidirectional attention likewise; embedding,
// DeltaNet gates and KV writes (copies or tiny) run the scalar reference.
#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "kernels/cpu/attention_amx.h"
#include "kernels/cpu/portable_kernels.h"
#include "util/check.h"
#include "util/float16.h"
#include "util/str_cat.h"

namespace ds {

CpuBackend::CpuBackend(Isa isa, int threads)
    : isa_(isa),
      pool_(threads),
      name_(str_cat("cpu ", isa_name(isa), ", ", threads, " thread(s)")),
      portable_(has_avx512(isa) ? &kernels::portable_kernels_avx512()
                : isa == Isa::avx2 ? &kernels::portable_kernels_avx2()
                                   : nullptr),
      delta_scratch_(static_cast<size_t>(threads)),
      thread_buffers_(static_cast<size_t>(threads)) {
  // Tile instructions fault until the process holds the tile permission, which this asks for once.
  DS_CHECK(isa != Isa::amx || amx_unavailable_reason().empty(), "AMX kernels requested, but ", amx_unavailable_reason());
  // A decode step's attention scores grow with the context (one more key block every 64 tokens):
  // with the whole budget reserved up front, growing them never allocates. Reserved pages are not
  // touched, so this costs address space, not memory, until a long context uses them.
  for (std::vector<float>& buffer : thread_buffers_) buffer.reserve(static_cast<size_t>(kernels::kAttentionScratchBudget));
}

// Bf16 weights go into bf16 panels in fast mode where a kernel runs them (AVX-512 BF16, AMX, AVX2);
// block-FP8 weights go into FP8 panels where this CPU has their kernels; every other weight is read
// as it is.
WeightFormatId CpuBackend::preferred_format(const TensorView& w, bool round_input_bf16) const {
  if (w.format == WeightFormatId::fp8_blocks)
    return weight_format(WeightFormatId::fp8_panels, w.dtype).fast_matmul(isa_, round_input_bf16) ? WeightFormatId::fp8_panels
                                                                                                  : w.format;
  const bool panels = isa_ >= Isa::avx2 && round_input_bf16 && w.format == WeightFormatId::stored &&
                      w.dtype == DType::BF16 && w.shape.size() == 2;
  return panels ? WeightFormatId::bf16_panels : w.format;
}

void CpuBackend::matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) {
  const MatmulOutput output{&w, y};
  matmuls(x, m, std::span(&output, 1), round_input_bf16);
}

// Below this many floats of work an op runs on the calling thread: a hand-off costs more.
constexpr int64_t kParallelFloats = 1 << 14;

void CpuBackend::matmuls(const float* x, int64_t m, std::span<const MatmulOutput> outputs, bool round_input_bf16) {
  // No rows, nothing to compute (a layer asked for none of its rows): the kernels assume m >= 1.
  if (m == 0) return;
  if (isa_ == Isa::scalar) {
    for (const MatmulOutput& out : outputs) ref_.matmul(x, m, *out.w, out.y, round_input_bf16);
    return;
  }
  // Neighbours whose kernels read the same activations (one codec, k and options) share one
  // preparation of them and one pass of the threads; a format without a kernel for this ISA and
  // mode runs its reference.
  auto fast = [&](const MatmulOutput& out) { return format_of(*out.w).fast_matmul(isa_, round_input_bf16); };
  for (size_t i = 0, end = 0; i < outputs.size(); i = end) {
    const TensorView& w = *outputs[i].w;
    const std::optional<FastMatmul> first = fast(outputs[i]);
    end = i + 1;
    if (!first) {
      ref_.matmul(x, m, w, outputs[i].y, round_input_bf16);
      continue;
    }
    const ActivationOptions options{round_input_bf16, w.activation_planes};
    auto shares_input = [&](const MatmulOutput& out) {
      const std::optional<FastMatmul> next = fast(out);
      return next && next->activations == first->activations && out.w->shape[1] == w.shape[1] &&
             out.w->activation_planes == options.planes;
    };
    while (end < outputs.size() && shares_input(outputs[end])) ++end;
    run_fast_matmuls(x, m, options, *first->activations, outputs.subspan(i, end - i));
  }
}

void CpuBackend::run_fast_matmuls(const float* x, int64_t m, const ActivationOptions& options,
                                  const ActivationCodec& codec, std::span<const MatmulOutput> outputs) {
  const int64_t k = outputs[0].w->shape[1];
  const uint64_t bytes = codec.bytes(m, k, options);
  if (activation_bytes_ < bytes) {
    activation_bytes_ = (bytes + 63) / 64 * 64;
    activations_.reset(static_cast<std::byte*>(std::aligned_alloc(64, activation_bytes_)));
    DS_CHECK(activations_ != nullptr, "cannot allocate ", activation_bytes_, " bytes of matmul activations");
  }
  std::byte* prepared = activations_.get();
  // Rows are prepared independently, so splitting them over threads changes no bit.
  run_ranges(m, m * k, 1, [&](int64_t begin, int64_t end, std::vector<float>&) {
    codec.prepare(x, m, k, options, begin, end, prepared);
  });
  // Each thread takes its share of every output in turn (thread t the t-th contiguous range of each
  // one's panels), so the ops that follow, which split each output's rows the same way (silu_mul's
  // gate and up, the conv's channels), find their inputs in their own core's cache. (With the outputs'
  // panels concatenated and cut once, gate was computed on one core and up on the other.)
  parts_.clear();
  for (const MatmulOutput& out : outputs) {
    const WeightFormat& format = format_of(*out.w);
    parts_.push_back(MatmulPart{format.fast_matmul(isa_, options.round_bf16)->kernel, format.panels(out.w->shape[0])});
  }
  pool_.run([&](int t, int threads) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto [begin, end] = ThreadPool::range(parts_[i].panels, t, threads);
      if (begin < end) parts_[i].kernel(prepared, m, options, *outputs[i].w, begin, end, outputs[i].y);
    }
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

void CpuBackend::layer_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, const TensorView& b,
                            float eps, float* out) {
  if (isa_ == Isa::scalar) return ref_.layer_norm(x, rows, dim, w, b, eps, out);
  auto kernel = portable_->layer_norm;
  run_ranges(rows, rows * dim, 1, [&](int64_t begin, int64_t end, std::vector<float>& buffer) {
    if (buffer.size() < static_cast<size_t>(2 * dim)) buffer.resize(static_cast<size_t>(2 * dim));
    kernel(x, dim, w, b, eps, out, begin, end, buffer.data());
  });
}

void CpuBackend::add_bias(float* x, int64_t rows, int64_t dim, const TensorView& bias) {
  if (isa_ == Isa::scalar) return ref_.add_bias(x, rows, dim, bias);
  auto kernel = portable_->add_bias;
  run_ranges(rows, rows * dim, 1, [&](int64_t begin, int64_t end, std::vector<float>& buffer) {
    if (buffer.size() < static_cast<size_t>(dim)) buffer.resize(static_cast<size_t>(dim));
    kernel(x, dim, bias, begin, end, buffer.data());
  });
}

void CpuBackend::gelu(float* x, int64_t n, Gelu kind) {
  if (isa_ == Isa::scalar) return ref_.gelu(x, n, kind);
  auto kernel = kind == Gelu::tanh ? portable_->gelu_tanh : portable_->gelu_erf;
  run_ranges(n, n, 16, [&](int64_t begin, int64_t end, std::vector<float>&) { kernel(x, begin, end); });
}

// (head, query tile) pairs are independent: each thread runs a contiguous range of them. Fast mode
// runs the bf16 form where the build has it (AVX-512 BF16); the AVX2 build keeps fp32 (backend.h).
void CpuBackend::attention_bidirectional(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                                         int64_t head_dim, float scale, float* out, bool round_input_bf16) {
  if (isa_ == Isa::scalar)
    return ref_.attention_bidirectional(q, k, v, n, num_heads, head_dim, scale, out, round_input_bf16);
  const bool bf16 = round_input_bf16 && portable_->attention_bidirectional_bf16 != nullptr;
  auto kernel = bf16 ? portable_->attention_bidirectional_bf16 : portable_->attention_bidirectional;
  const int64_t tiles = kernels::vision_attention_tiles(n, num_heads);
  const auto scratch_floats = static_cast<size_t>(bf16 ? kernels::vision_attention_bf16_scratch_floats(n, head_dim)
                                                       : kernels::vision_attention_scratch_floats(head_dim));
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(tiles, t, threads);
    if (begin >= end) return;
    std::vector<float>& scratch = thread_buffers_[t];
    if (scratch.size() < scratch_floats) scratch.resize(scratch_floats);
    kernel(q, k, v, n, num_heads, head_dim, scale, out, begin, end, scratch.data());
  });
}

void CpuBackend::run_ranges(int64_t count, int64_t work, int64_t align,
                            FunctionRef<void(int64_t, int64_t, std::vector<float>&)> fn) {
  if (work < kParallelFloats || pool_.size() == 1) return fn(0, count, thread_buffers_[0]);
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(count, t, threads, align);
    if (begin < end) fn(begin, end, thread_buffers_[t]);
  });
}

// The caches' copies (a 2B DeltaNet state is 19.3 MiB), 1 MiB or more split over the pool in
// page-aligned parts: a 2B snapshot takes 2.3–2.5 ms on one thread of the AMX Xeon, 0.72–0.76 ms on
// two (docs/benchmarks.md; on a Zen 4 machine under load 7–9 the split once measured no faster).
void CpuBackend::copy(void* dst, const void* src, uint64_t bytes) {
  constexpr uint64_t kSplitBytes = uint64_t{1} << 20;
  if (bytes < kSplitBytes || pool_.size() == 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(static_cast<int64_t>(bytes), t, threads, 4096);
    if (begin < end)
      std::memcpy(static_cast<std::byte*>(dst) + begin, static_cast<const std::byte*>(src) + begin,
                  static_cast<size_t>(end - begin));
  });
}

// Tasks taken one at a time from a shared counter: their costs differ (a greedy request's sample
// against a sampled one's), so a fixed split would leave a thread waiting.
void CpuBackend::parallel_for(int64_t count, FunctionRef<void(int64_t)> task) {
  if (count <= 1 || pool_.size() == 1) return Backend::parallel_for(count, task);
  std::atomic<int64_t> next{0};
  pool_.run([&](int, int) {
    for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < count; i = next.fetch_add(1, std::memory_order_relaxed))
      task(i);
  });
}

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
                                            const float* state_in, float* state_out, float* out) {
  if (isa_ == Isa::scalar)
    return ref_.gated_delta_rule_recurrent(q, k, v, qkv_stride, g, beta, n, shape, state_in, state_out, out);
  auto kernel = portable_->delta_recurrent;
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(shape.num_v_heads, t, threads);
    if (begin >= end) return;
    delta_scratch_[t].size_for(shape);
    kernel(q, k, v, qkv_stride, g, beta, n, shape, state_in, state_out, out, begin, end, delta_scratch_[t]);
  });
}

// Channels are independent: each thread runs a contiguous, 16-aligned range of channels.
void CpuBackend::causal_conv1d_silu(const float* x, int64_t n, int64_t channels, const float* taps, int64_t kernel,
                                    const float* state_in, float* state_out, float* out) {
  if (isa_ == Isa::scalar) return ref_.causal_conv1d_silu(x, n, channels, taps, kernel, state_in, state_out, out);
  auto conv = portable_->conv;
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(channels, t, threads, 16);
    if (begin >= end) return;
    std::vector<float>& history = thread_buffers_[t];  // [K-1, end - begin]
    const auto needed = static_cast<size_t>((kernel - 1) * (end - begin));
    if (history.size() < needed) history.resize(needed);
    conv(x, n, channels, taps, kernel, state_in, state_out, out, begin, end, history.data());
  });
}

// Query heads are independent: each thread runs a contiguous range of heads over all tokens (with
// 8 heads on 2 threads, one GQA group each, so each thread streams only its own kv head).
void CpuBackend::attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                           const KvLayerView& kv, float scale, float* out) {
  if (isa_ == Isa::scalar) return ref_.attention(q, n, start_pos, num_heads, block_table, kv, scale, out);
  // With AMX a bf16 cache runs on tiles (its own arithmetic, attention_amx.h), decode included.
  const bool amx = isa_ == Isa::amx && kernels::attention_amx_supports(kv);
  auto kernel = amx ? kernels::attention_heads_amx : portable_->attention;
  const int64_t group = num_heads / kv.num_kv_heads;
  const int64_t scores_floats = amx ? kernels::attention_amx_scratch_floats(n, start_pos, group, kv.head_dim)
                                    : kernels::attention_scratch_floats(n, start_pos, group, kv.head_dim);
  pool_.run([&](int t, int threads) {
    const auto [begin, end] = ThreadPool::range(num_heads, t, threads);
    if (begin >= end) return;
    std::vector<float>& scores = thread_buffers_[t];
    if (scores.size() < static_cast<size_t>(scores_floats)) scores.resize(static_cast<size_t>(scores_floats));
    kernel(q, n, start_pos, num_heads, block_table, kv, scale, out, begin, end, scores.data(), scores_floats);
  });
}

}  // namespace ds
