// load_vision_model: the tower's weights, the preprocessor and the pad token, with one log line.
#include "vision/vision_model.h"

#include <chrono>

#include "io/dtype.h"
#include "util/human.h"
#include "util/log.h"
#include "vision/vision_packing.h"

namespace ds {
namespace {

void count(const TensorView& view, VisionModel& model) {
  int64_t elements = 1;
  for (const int64_t d : view.shape) elements *= d;
  model.parameters += elements;
  model.bytes += view.nbytes;
}

}  // namespace

Result<std::unique_ptr<VisionModel>> load_vision_model(Checkpoint& checkpoint, const ModelConfig& config,
                                                       const std::string& dir) {
  auto model = std::make_unique<VisionModel>();
  DS_ASSIGN_OR_RETURN(model->weights, bind_vision_weights(checkpoint, config));
  DS_ASSIGN_OR_RETURN(model->preprocessor, load_preprocessor_config(dir));
  model->config = *config.vision;
  model->image_token_id = static_cast<int32_t>(config.image_token_id);
  const VisionWeights& w = model->weights;
  for (const TensorView* view : {&w.patch_embed, &w.patch_embed_bias, &w.pos_embed, &w.merger_norm_weight,
                                 &w.merger_norm_bias, &w.merger_fc1_weight, &w.merger_fc1_bias, &w.merger_fc2_weight,
                                 &w.merger_fc2_bias})
    count(*view, *model);
  for (const VisionBlockWeights& b : w.blocks)
    for (const TensorView* view : {&b.norm1_weight, &b.norm1_bias, &b.qkv_weight, &b.qkv_bias, &b.proj_weight,
                                   &b.proj_bias, &b.norm2_weight, &b.norm2_bias, &b.fc1_weight, &b.fc1_bias,
                                   &b.fc2_weight, &b.fc2_bias})
      count(*view, *model);
  model->tower = std::make_unique<VisionTower>(model->config, model->weights);
  const VisionConfig& v = model->config;
  log::info("vision: tower bound (", v.depth, " blocks, hidden ", v.hidden_size, ", patch ", v.patch_size, ", merge ",
            v.spatial_merge_size, "; ", human_count(static_cast<uint64_t>(model->parameters)), " parameters, ", human_bytes(model->bytes),
            "); images up to ", model->preprocessor.max_pixels, " pixels after resizing");
  return model;
}

void pack_vision_model(VisionModel& model, const Backend& backend, bool round_input_bf16, int threads) {
  const auto start = std::chrono::steady_clock::now();
  SourceRelease release;
  model.packed = pack_vision_weights(model.weights, backend, round_input_bf16, threads, release);
  if (!model.packed) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log::info("vision: matmul weights packed into panels in ", seconds, " s: ", human_bytes(model.packed->bytes()),
            " in memory, ", human_bytes(release.released), " of mapped source pages released");
}

}  // namespace ds
