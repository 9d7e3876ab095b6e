// VisionTower::forward after HF Qwen3_5VisionModel.forward (modeling_qwen3_5.py, transformers 5.24).
#include "vision/vision_tower.h"

#include <algorithm>
#include <cmath>

namespace ds {
namespace {

constexpr float kLayerNormEps = 1e-6f;

// y [m, n] = x [m, k] · wᵀ + b (an nn.Linear).
void linear(Backend& backend, const float* x, int64_t m, const TensorView& w, const TensorView& b, float* y,
            bool round_input_bf16) {
  backend.matmul(x, m, w, y, round_input_bf16);
  backend.add_bias(y, m, w.shape[0], b);
}

}  // namespace

Result<VisionOutput> VisionTower::forward(Backend& backend, std::span<const float> pixel_values,
                                          std::span<const VisionGrid> grids, bool round_input_bf16) const {
  const VisionConfig& c = config_;
  const int64_t D = c.hidden_size, m = c.spatial_merge_size, features = weights_.patch_embed.shape[1];
  int64_t N = 0;
  for (const VisionGrid& g : grids) {
    if (g.t < 1 || g.h < 1 || g.w < 1 || g.h % m != 0 || g.w % m != 0)
      return Status::errorf("vision tower: expected a grid of sides that are positive multiples of ", m, ", found ", g.t,
                            " x ", g.h, " x ", g.w);
    N += g.patches();
  }
  if (static_cast<int64_t>(pixel_values.size()) != N * features)
    return Status::errorf("vision tower: expected ", N, " pixel_values rows of ", features, " for the grids, found ",
                          pixel_values.size(), " values");

  // Patch embedding plus the position table at each patch's place; rotary angles per patch.
  std::vector<float> x(static_cast<size_t>(N * D));  // [N, D] the residual stream
  linear(backend, pixel_values.data(), N, weights_.patch_embed, weights_.patch_embed_bias, x.data(), round_input_bf16);
  const int64_t side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(c.num_position_embeddings))));
  const int64_t head_dim = D / c.num_heads;
  std::vector<float> positional(static_cast<size_t>(N * D));          // [N, D]
  std::vector<float> cos(static_cast<size_t>(N * head_dim / 2)), sin(cos.size());  // [N, head_dim / 2] each
  int64_t row = 0;
  for (const VisionGrid& g : grids) {
    const std::vector<PatchPosition> positions = patch_positions(g, m);
    interpolated_position_embeddings(weights_.pos_embed, side, g, positions, positional.data() + row * D);
    vision_rotary_angles(positions, head_dim, c.rope_theta, cos.data() + row * head_dim / 2, sin.data() + row * head_dim / 2);
    row += g.patches();
  }
  backend.add(x.data(), positional.data(), N * D);
  const RopeAngles angles{cos.data(), sin.data(), head_dim / 2};

  for (const VisionBlockWeights& w : weights_.blocks) block(backend, w, grids, angles, x, round_input_bf16);

  // Merger: LayerNorm per patch, then each 2 × 2 block's m² consecutive rows as one vector.
  VisionOutput out;
  const int64_t tokens = N / (m * m), merged_dim = m * m * D;
  std::vector<float> normed(static_cast<size_t>(N * D));                    // [N, D] = [tokens, m²D]
  std::vector<float> hidden(static_cast<size_t>(tokens * merged_dim));      // [tokens, m²D]
  backend.layer_norm(x.data(), N, D, weights_.merger_norm_weight, weights_.merger_norm_bias, kLayerNormEps, normed.data());
  linear(backend, normed.data(), tokens, weights_.merger_fc1_weight, weights_.merger_fc1_bias, hidden.data(), round_input_bf16);
  backend.gelu(hidden.data(), tokens * merged_dim, Backend::Gelu::erf);
  out.merged.resize(static_cast<size_t>(tokens * c.out_hidden_size));      // [tokens, O]
  linear(backend, hidden.data(), tokens, weights_.merger_fc2_weight, weights_.merger_fc2_bias, out.merged.data(),
         round_input_bf16);
  out.hidden = std::move(x);
  return out;
}

void VisionTower::block(Backend& backend, const VisionBlockWeights& w, std::span<const VisionGrid> grids,
                        const RopeAngles& angles, std::vector<float>& x, bool round_input_bf16) const {
  const int64_t D = config_.hidden_size, heads = config_.num_heads, head_dim = D / heads, I = config_.intermediate_size;
  const int64_t N = static_cast<int64_t>(x.size()) / D;
  std::vector<float> normed(static_cast<size_t>(N * D));   // [N, D]
  std::vector<float> qkv(static_cast<size_t>(N * 3 * D));  // [N, 3, heads, head_dim]
  backend.layer_norm(x.data(), N, D, w.norm1_weight, w.norm1_bias, kLayerNormEps, normed.data());
  linear(backend, normed.data(), N, w.qkv_weight, w.qkv_bias, qkv.data(), round_input_bf16);
  // q, k, v apart, [N, heads, head_dim] each, as the rotary and attention ops take them.
  std::vector<float> q(static_cast<size_t>(N * D)), k(q.size()), v(q.size());
  for (int64_t r = 0; r < N; ++r) {
    const float* src = qkv.data() + r * 3 * D;
    std::copy(src, src + D, q.data() + r * D);
    std::copy(src + D, src + 2 * D, k.data() + r * D);
    std::copy(src + 2 * D, src + 3 * D, v.data() + r * D);
  }
  backend.rope(q.data(), N, heads, head_dim, angles);
  backend.rope(k.data(), N, heads, head_dim, angles);
  // Attention within each image (each frame group of a video is its own segment too).
  std::vector<float>& attended = normed;  // [N, D], reused
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  int64_t start = 0;
  for (const VisionGrid& g : grids)
    for (int64_t t = 0; t < g.t; ++t) {
      const int64_t n = g.h * g.w, offset = start * D;
      backend.attention_bidirectional(q.data() + offset, k.data() + offset, v.data() + offset, n, heads, head_dim, scale,
                                      attended.data() + offset, round_input_bf16);
      start += n;
    }
  std::vector<float> projected(static_cast<size_t>(N * D));  // [N, D]
  linear(backend, attended.data(), N, w.proj_weight, w.proj_bias, projected.data(), round_input_bf16);
  backend.add(x.data(), projected.data(), N * D);

  backend.layer_norm(x.data(), N, D, w.norm2_weight, w.norm2_bias, kLayerNormEps, normed.data());
  std::vector<float> inner(static_cast<size_t>(N * I));  // [N, I]
  linear(backend, normed.data(), N, w.fc1_weight, w.fc1_bias, inner.data(), round_input_bf16);
  backend.gelu(inner.data(), N * I, Backend::Gelu::tanh);
  linear(backend, inner.data(), N, w.fc2_weight, w.fc2_bias, projected.data(), round_input_bf16);
  backend.add(x.data(), projected.data(), N * D);
}

}  // namespace ds
