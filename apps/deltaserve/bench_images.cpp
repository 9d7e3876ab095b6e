#include "bench_images.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "jpeg_encode.h"
#include "token_list.h"
#include "util/elapsed.h"
#include "util/random.h"
#include "util/str_cat.h"
#include "vision/decode_image.h"
#include "vision/image_preprocessor.h"
#include "vision/mrope_positions.h"
#include "vision_options.h"
#include "model/sequence_runner.h"

namespace ds::app {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kJpegQuality = 90;

// Forwards every op to `inner`, adding the wall time of the matmuls and of the attention: the
// tower's time split by kind.
class TimedBackend final : public Backend {
 public:
  explicit TimedBackend(Backend& inner) : inner_(inner) {}
  double matmul_s = 0, attention_s = 0;

  const char* name() const override { return inner_.name(); }
  void matmul(const float* x, int64_t m, const TensorView& w, float* y, bool round_input_bf16) override {
    const auto start = Clock::now();
    inner_.matmul(x, m, w, y, round_input_bf16);
    matmul_s += seconds_since(start);
  }
  void matmuls(const float* x, int64_t m, std::span<const MatmulOutput> outputs, bool round_input_bf16) override {
    const auto start = Clock::now();
    inner_.matmuls(x, m, outputs, round_input_bf16);
    matmul_s += seconds_since(start);
  }
  WeightFormatId preferred_format(const TensorView& w, bool round_input_bf16) const override {
    return inner_.preferred_format(w, round_input_bf16);
  }
  void embedding(const int32_t* ids, int64_t n, const TensorView& table, float* out) override {
    inner_.embedding(ids, n, table, out);
  }
  void rms_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, float eps, float* out) override {
    inner_.rms_norm(x, rows, dim, w, eps, out);
  }
  void rms_norm_gated(const float* x, const float* z, int64_t rows, int64_t dim, const TensorView& w, float eps,
                      float* out) override {
    inner_.rms_norm_gated(x, z, rows, dim, w, eps, out);
  }
  void silu_mul(const float* gate, const float* up, int64_t n, float* out) override { inner_.silu_mul(gate, up, n, out); }
  void sigmoid_gate(float* x, const float* gate, int64_t n) override { inner_.sigmoid_gate(x, gate, n); }
  void add(float* x, const float* y, int64_t n) override { inner_.add(x, y, n); }
  void deltanet_gates(const float* a, const float* b, int64_t n, int64_t heads, const TensorView& A_log,
                      const TensorView& dt_bias, float* g, float* beta) override {
    inner_.deltanet_gates(a, b, n, heads, A_log, dt_bias, g, beta);
  }
  void kv_write(const float* k, const float* v, int64_t n, int64_t start_pos, const int32_t* block_table,
                const KvLayerView& kv) override {
    inner_.kv_write(k, v, n, start_pos, block_table, kv);
  }
  void rope(float* x, int64_t tokens, int64_t heads, int64_t head_dim, const RopeAngles& angles) override {
    inner_.rope(x, tokens, heads, head_dim, angles);
  }
  void causal_conv1d_silu(const float* x, int64_t n, int64_t channels, const float* taps, int64_t kernel,
                          const float* state_in, float* state_out, float* out) override {
    inner_.causal_conv1d_silu(x, n, channels, taps, kernel, state_in, state_out, out);
  }
  void gated_delta_rule_chunked(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                                const float* beta, int64_t n, const DeltaNetShape& shape, float* state,
                                float* out) override {
    inner_.gated_delta_rule_chunked(q, k, v, qkv_stride, g, beta, n, shape, state, out);
  }
  void gated_delta_rule_recurrent(const float* q, const float* k, const float* v, int64_t qkv_stride, const float* g,
                                  const float* beta, int64_t n, const DeltaNetShape& shape, const float* state_in,
                                  float* state_out, float* out) override {
    inner_.gated_delta_rule_recurrent(q, k, v, qkv_stride, g, beta, n, shape, state_in, state_out, out);
  }
  void copy(void* dst, const void* src, uint64_t bytes) override { inner_.copy(dst, src, bytes); }
  void parallel_for(int64_t count, FunctionRef<void(int64_t)> task) override { inner_.parallel_for(count, task); }
  void attention(const float* q, int64_t n, int64_t start_pos, int64_t num_heads, const int32_t* block_table,
                 const KvLayerView& kv, float scale, float* out) override {
    inner_.attention(q, n, start_pos, num_heads, block_table, kv, scale, out);
  }
  void layer_norm(const float* x, int64_t rows, int64_t dim, const TensorView& w, const TensorView& b, float eps,
                  float* out) override {
    inner_.layer_norm(x, rows, dim, w, b, eps, out);
  }
  void add_bias(float* x, int64_t rows, int64_t dim, const TensorView& bias) override { inner_.add_bias(x, rows, dim, bias); }
  void gelu(float* x, int64_t n, Gelu kind) override { inner_.gelu(x, n, kind); }
  void attention_bidirectional(const float* q, const float* k, const float* v, int64_t n, int64_t num_heads,
                               int64_t head_dim, float scale, float* out, bool round_input_bf16) override {
    const auto start = Clock::now();
    inner_.attention_bidirectional(q, k, v, n, num_heads, head_dim, scale, out, round_input_bf16);
    attention_s += seconds_since(start);
  }

 private:
  Backend& inner_;
};

// A photo-like S × S picture (smooth gradients and a texture), the same bytes every run.
RgbImage synthetic_image(int64_t side) {
  RgbImage image{side, side, std::vector<uint8_t>(static_cast<size_t>(side * side * 3))};
  for (int64_t y = 0; y < side; ++y)
    for (int64_t x = 0; x < side; ++x) {
      uint8_t* p = image.row(y) + 3 * x;
      p[0] = static_cast<uint8_t>(255 * x / side);
      p[1] = static_cast<uint8_t>(255 * y / side);
      p[2] = static_cast<uint8_t>((x * 7 + y * 13) % 256);
    }
  return image;
}

// Matmul FLOPs of the tower and merger over `patches` patches (2 per multiply-add), and of its attention.
double tower_matmul_flops(const VisionConfig& c, int64_t patches) {
  const double D = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
  const double m2 = static_cast<double>(c.spatial_merge_size * c.spatial_merge_size);
  const double pixels_per_patch = static_cast<double>(c.in_channels * c.temporal_patch_size * c.patch_size * c.patch_size);
  const double per_patch = pixels_per_patch * D + static_cast<double>(c.depth) * (3 * D * D + D * D + 2 * D * I);
  const double per_token = m2 * D * m2 * D + static_cast<double>(c.out_hidden_size) * m2 * D;
  return 2 * (static_cast<double>(patches) * per_patch + static_cast<double>(patches) / m2 * per_token);
}
double tower_attention_flops(const VisionConfig& c, int64_t patches) {
  const double n = static_cast<double>(patches);
  return 4 * n * n * static_cast<double>(c.hidden_size) * static_cast<double>(c.depth);  // q·k and p·v
}

}  // namespace

Result<std::vector<int32_t>> parse_image_sides(const std::string& sizes) {
  DS_ASSIGN_OR_RETURN(std::vector<int32_t> sides, parse_int_list(sizes, "--images"));
  for (int32_t side : sides)
    if (side < 32) return Status::errorf("--images: expected image sides >= 32 pixels, found ", side);
  return sides;
}

Status bench_images(const std::vector<int32_t>& sides, LoadedModel& loaded, const std::string& model_dir, int threads,
                    double peak_flops, const char* peak_name, bool json) {
  std::string refusal;
  const std::unique_ptr<VisionModel> vision = load_vision_if_present(loaded, model_dir, threads, refusal);
  if (!vision) return Status::errorf("--images: this checkpoint serves no images (", refusal, ")");
  Qwen35Model& model = *loaded.model;
  const bool fast = model.mode() == ComputeMode::fast;
  const VisionConfig& c = vision->config;
  Xoshiro256 rng(7);
  auto text_tokens = [&](int64_t n) {  // random ids, never the image pad
    std::vector<int32_t> ids;
    while (static_cast<int64_t>(ids.size()) < n) {
      const auto id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(loaded.config.text.vocab_size));
      if (id != vision->image_token_id) ids.push_back(id);
    }
    return ids;
  };
  for (const int32_t side : sides) {
    // What a client sends: a photo-like picture as a quality-90 JPEG (the decode is timed, the encode not).
    DS_ASSIGN_OR_RETURN(const std::vector<uint8_t> jpeg, encode_jpeg(synthetic_image(side), kJpegQuality));
    auto start = Clock::now();
    DS_ASSIGN_OR_RETURN(const RgbImage image, decode_image(jpeg));
    const double decode_s = seconds_since(start);
    start = Clock::now();
    DS_ASSIGN_OR_RETURN(const PreprocessedImage pre, preprocess_image(image, vision->preprocessor));
    const double preprocess_s = seconds_since(start);
    const VisionGrid grid{pre.grid_t, pre.grid_h, pre.grid_w};

    TimedBackend timed(model.backend());
    start = Clock::now();
    DS_ASSIGN_OR_RETURN(const VisionOutput out, vision->tower->forward(timed, pre.pixel_values, std::span(&grid, 1), fast));
    const double tower_s = seconds_since(start);

    // A short chat turn around the image: 4 tokens, the pads, a 16-token question.
    const int64_t image_tokens = vision->tower->tokens(grid);
    std::vector<int32_t> prompt = text_tokens(4);
    const int64_t first_pad = static_cast<int64_t>(prompt.size());
    prompt.insert(prompt.end(), static_cast<size_t>(image_tokens), vision->image_token_id);
    for (int32_t id : text_tokens(16)) prompt.push_back(id);
    DS_ASSIGN_OR_RETURN(const MropePositions positions,
                        mrope_positions(prompt, vision->image_token_id, std::span(&grid, 1), vision->merge_size()));
    std::vector<int32_t> embedding_at(static_cast<size_t>(image_tokens));
    for (int64_t i = 0; i < image_tokens; ++i) embedding_at[static_cast<size_t>(i)] = static_cast<int32_t>(first_pad + i);
    const auto n = static_cast<int64_t>(prompt.size());
    SequenceRunner runner(model, n + 1, n);
    std::vector<float> logits;
    start = Clock::now();
    DS_TRY(runner.feed(prompt, positions.positions, embedding_at, out.merged, LogitsRows::last, logits));
    const double prefill_s = seconds_since(start);

    const double ttft = decode_s + preprocess_s + tower_s + prefill_s;
    const double matmul_flops = tower_matmul_flops(c, grid.patches()), attention_flops = tower_attention_flops(c, grid.patches());
    const double matmul_rate = timed.matmul_s > 0 ? matmul_flops / timed.matmul_s : 0;
    const double attention_rate = timed.attention_s > 0 ? attention_flops / timed.attention_s : 0;
    const double share = peak_flops > 0 ? matmul_rate / peak_flops : 0;
    if (json)
      std::printf("{\"test\": \"image%d\", \"patches\": %lld, \"image_tokens\": %lld, \"prompt_tokens\": %lld, "
                  "\"jpeg_bytes\": %zu, \"ttft_s\": %.6f, \"decode_s\": %.6f, \"preprocess_s\": %.6f, \"tower_s\": %.6f, "
                  "\"tower_matmul_s\": %.6f, \"tower_attention_s\": %.6f, \"prefill_s\": %.6f, \"tower_matmul_gflops\": %.3f, "
                  "\"tower_attention_gflops\": %.3f, \"tower_matmul_peak_fraction\": %.4f}\n",
                  side, static_cast<long long>(grid.patches()), static_cast<long long>(image_tokens),
                  static_cast<long long>(n), jpeg.size(), ttft, decode_s, preprocess_s, tower_s, timed.matmul_s,
                  timed.attention_s, prefill_s, matmul_rate / 1e9, attention_rate / 1e9, share);
    else
      std::printf("  image %d x %d (JPEG %.0f KiB; resized %lld x %lld: %lld patches, %lld tokens; prompt %lld): TTFT %.3f s = "
                  "decoding %.3f + preprocessing %.3f + tower %.3f + prefill %.3f; tower matmuls %.3f s at %.1f GFLOP/s "
                  "(%.1f%% of the %s peak), attention %.3f s at %.1f GFLOP/s (%s)\n",
                  side, side, static_cast<double>(jpeg.size()) / 1024, static_cast<long long>(grid.h * c.patch_size),
                  static_cast<long long>(grid.w * c.patch_size), static_cast<long long>(grid.patches()),
                  static_cast<long long>(image_tokens), static_cast<long long>(n), ttft, decode_s, preprocess_s, tower_s,
                  prefill_s, timed.matmul_s, matmul_rate / 1e9,
                  100 * share, peak_name, timed.attention_s, attention_rate / 1e9,
                  fast ? "fast mode: bf16 products where the ISA has them" : "fp32");
    std::fflush(stdout);
  }
  return {};
}

}  // namespace ds::app
