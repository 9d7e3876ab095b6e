// Prompts with images through the text model, against HF's Qwen3_5ForConditionalGeneration (fp32,
// reference backend): file bytes → decode → preprocess → tower + merger → rows scattered at the
// image-pad tokens, mRoPE positions → logits of every position, then greedy decoding at
// cache length + rope_delta.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/ref/ref_backend.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "vision/decode_image.h"
#include "vision/image_preprocessor.h"
#include "vision/mrope_positions.h"
#include "vision/vision_tower.h"
#include "vision_fixture.h"

namespace ds {
namespace {

using test::kVisionFixture;

// The bound for fp32 logits against HF: per position max |ours − ref| ÷ max |ref|.
constexpr double kLogitTolerance = 1e-4;

struct Prompt {
  const char* name;
  std::vector<std::string> images;  // in prompt order (make_vision_fixtures.py's `prompts`)
};

int32_t argmax_of(std::span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

TEST(VisionPrompt, LogitsAndGreedyContinuationMatchHf) {
  RefBackend backend;
  Result<LoadedModel> loaded = load_model(kVisionFixture.string(), backend, ComputeMode::f32);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Result<VisionWeights> weights = bind_vision_weights(*loaded->checkpoint, loaded->config);
  ASSERT_TRUE(weights.ok()) << weights.status().message();
  const VisionConfig& vision = *loaded->config.vision;
  const VisionTower tower(vision, *weights);
  const Result<PreprocessorConfig> preprocessor = load_preprocessor_config(kVisionFixture.string());
  ASSERT_TRUE(preprocessor.ok());
  const test::VisionReference ref;
  const int64_t vocab = loaded->config.text.vocab_size, hidden = loaded->config.text.hidden_size;
  const auto image_token = static_cast<int32_t>(loaded->config.image_token_id);

  for (const Prompt& prompt : {Prompt{"one_image", {"rgb_64x96.png"}},
                               Prompt{"two_images", {"gray_80x112.png", "up_30x40.jpg"}},
                               Prompt{"multi_turn", {"rgb_64x96.png", "gray_80x112.png"}},
                               Prompt{"text_only", {}}}) {
    const std::string p = prompt.name;
    std::vector<float> pixel_values;
    std::vector<VisionGrid> grids;
    for (const std::string& name : prompt.images) {
      const Result<RgbImage> image = decode_image(test::read_image_file(name));
      ASSERT_TRUE(image.ok()) << image.status().message();
      const Result<PreprocessedImage> pre = preprocess_image(*image, *preprocessor);
      ASSERT_TRUE(pre.ok()) << pre.status().message();
      pixel_values.insert(pixel_values.end(), pre->pixel_values.begin(), pre->pixel_values.end());
      grids.push_back({pre->grid_t, pre->grid_h, pre->grid_w});
    }
    VisionOutput merged;  // none for a text-only prompt: the tower does not run
    if (!grids.empty()) {
      Result<VisionOutput> tower_out = tower.forward(backend, pixel_values, grids);
      ASSERT_TRUE(tower_out.ok()) << tower_out.status().message();
      merged = std::move(tower_out).value();
    }

    const std::vector<int64_t> ids64 = ref.values<int64_t>(p + ".input_ids");
    const std::vector<int32_t> ids(ids64.begin(), ids64.end());
    const Result<MropePositions> positions = mrope_positions(ids, image_token, grids, vision.spatial_merge_size);
    ASSERT_TRUE(positions.ok()) << positions.status().message();
    std::vector<int32_t> image_at;  // the image-pad tokens, in order: where the merger rows go
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == image_token) image_at.push_back(static_cast<int32_t>(i));
    ASSERT_EQ(static_cast<int64_t>(image_at.size()) * hidden, static_cast<int64_t>(merged.merged.size())) << p;

    const std::vector<int64_t> greedy = ref.values<int64_t>(p + ".greedy");
    const auto capacity = static_cast<int64_t>(ids.size() + greedy.size());
    SequenceRunner runner(*loaded->model, capacity, capacity);
    std::vector<float> logits;
    ASSERT_TRUE(runner.feed(ids, positions->positions, image_at, merged.merged, LogitsRows::all, logits).ok());
    const std::vector<float> want = ref.values<float>(p + ".logits");
    ASSERT_EQ(logits.size(), want.size()) << p;
    double worst = 0;
    for (size_t r = 0; r < ids.size(); ++r) {
      double diff = 0, scale = 0;
      for (int64_t v = 0; v < vocab; ++v) {
        diff = std::max(diff, double(std::fabs(logits[r * vocab + v] - want[r * vocab + v])));
        scale = std::max(scale, double(std::fabs(want[r * vocab + v])));
      }
      worst = std::max(worst, diff / scale);
    }
    std::printf("%s: %zu tokens, worst position's logit error %.2e relative to HF\n", p.c_str(), ids.size(), worst);
    EXPECT_LE(worst, kLogitTolerance) << p << ": worst position's relative logit error";

    // Greedy decoding: token at cache length L sits at L + rope_delta on all three rows.
    int32_t next = argmax_of(std::span(logits).last(static_cast<size_t>(vocab)));
    for (size_t step = 0; step < greedy.size(); ++step) {
      EXPECT_EQ(next, greedy[step]) << p << " greedy token " << step;
      const auto at = static_cast<int32_t>(runner.position() + positions->rope_delta);
      const int32_t pos[3] = {at, at, at};
      ASSERT_TRUE(runner.feed(std::span(&next, 1), pos, {}, {}, LogitsRows::last, logits).ok());
      next = argmax_of(logits);
    }
  }
}

}  // namespace
}  // namespace ds
