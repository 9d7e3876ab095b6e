// The MTP head of a request with an image gets what vLLM's proposer gives it: the main model's mRoPE
// positions for every row, the merger row of the next token where that token is an image pad (the head
// embeds the next token), and position + rope_delta for its chained steps — recorded from the head's
// calls on a micro checkpoint with a tower and a head. The output stays plain decoding's.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/engine.h"
#include "engine/mtp_drafter.h"
#include "engine/qwen35_step_model.h"
#include "engine/request_images.h"
#include "kernels/cpu/cpu_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "stream_tokens.h"
#include "test_util.h"
#include "vision/vision_model.h"

namespace ds::mtp_image_inputs_test {
namespace {

constexpr int32_t kImagePad = 508, kVisionStart = 506, kVisionEnd = 507;

// Keeps a copy of every sequence of every head call.
class RecordingStepModel : public Qwen35StepModel {
 public:
  using Qwen35StepModel::Qwen35StepModel;
  struct Call {
    int64_t step = 0, start_pos = 0, rows = 0;
    std::vector<int32_t> positions, at;
    std::vector<float> embedding_rows;
  };
  std::vector<Call> calls;

  Status mtp_forward(const ForwardBatch& batch, int64_t step, const float* pair_hidden, HybridCache& cache, float* logits,
                     float* mtp_hidden) override {
    for (const SequenceInput& s : batch.sequences)
      calls.push_back(Call{step, s.start_pos, static_cast<int64_t>(s.tokens.size()), {s.positions.begin(), s.positions.end()},
                           {s.embedding_at.begin(), s.embedding_at.end()}, {s.embedding_rows.begin(), s.embedding_rows.end()}});
    return Qwen35StepModel::mtp_forward(batch, step, pair_hidden, cache, logits, mtp_hidden);
  }
};

// A 24 x 16 picture of gradients: 6 x 4 patches of 4 pixels, 6 image tokens after the 2 x 2 merge.
RgbImage picture() {
  RgbImage image{24, 16, std::vector<uint8_t>(24 * 16 * 3)};
  for (int64_t y = 0; y < image.height; ++y)
    for (int64_t x = 0; x < image.width; ++x)
      for (int64_t c = 0; c < 3; ++c) image.row(y)[3 * x + c] = static_cast<uint8_t>((x * 11 + y * 7 + c * 60) % 256);
  return image;
}

TEST(MtpImageInputs, TheHeadGetsTheMainModelsPositionsAndMergerRows) {
  test::TempDir tmp;
  nlohmann::ordered_json config = test::micro_config_json({});
  config["image_token_id"] = kImagePad;  // inside the micro vocabulary (512)
  config["vision_start_token_id"] = kVisionStart;
  config["vision_end_token_id"] = kVisionEnd;
  config["video_token_id"] = 509;
  RandomCheckpointOptions writer;
  const std::string dir = tmp / "m";
  writer.out_dir = dir;
  writer.with_mtp = true;
  ASSERT_TRUE(write_random_checkpoint(config, writer, test::micro_assets()).ok());
  // The micro tower's patches are 4 pixels; bounds that keep the 24 x 16 picture as it is.
  test::write_file(dir + "/preprocessor_config.json",
                   R"({"size": {"longest_edge": 4096, "shortest_edge": 64}, "patch_size": 4, "temporal_patch_size": 2,
                       "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]})");
  CpuBackend backend(detect_isa(), 2);
  auto loaded = load_model(dir, backend, ComputeMode::fast);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto vision = load_vision_model(*loaded->checkpoint, loaded->config, dir);
  ASSERT_TRUE(vision.ok()) << vision.status().message();
  auto prepared = prepare_image(picture(), (*vision)->preprocessor);
  ASSERT_TRUE(prepared.ok()) << prepared.status().message();
  const PromptImage image = std::move(prepared).value();
  ASSERT_EQ(image.grid.h * image.grid.w / 4, 6);

  std::vector<int32_t> prompt = test::random_tokens(9, 500, 1);
  prompt.push_back(kVisionStart);
  const auto first_pad = static_cast<int64_t>(prompt.size());
  prompt.insert(prompt.end(), 6, kImagePad);
  prompt.push_back(kVisionEnd);
  for (int32_t t : test::random_tokens(5, 500, 2)) prompt.push_back(t);
  const auto prompt_len = static_cast<int64_t>(prompt.size());
  auto plan = plan_request_images(prompt, {image}, kImagePad, 2);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_NE(plan->rope_delta, 0) << "the picture must move the text positions, or the test shows nothing";

  Qwen35StepModel plain(*loaded->model);
  plain.attach_vision(**vision);
  RecordingStepModel with_head(*loaded->model, default_kv_dtype(*loaded->model), /*with_mtp=*/true);
  with_head.attach_vision(**vision);
  auto merger = with_head.encode_image(image);  // [6, hidden]
  ASSERT_TRUE(merger.ok()) << merger.status().message();
  const int64_t H = loaded->config.text.hidden_size;

  SamplingParams greedy;
  greedy.max_tokens = 10;
  greedy.ignore_eos = true;
  EngineOptions options;
  options.cache_memory = 32 << 20;
  options.prefix_cache_memory = 0;
  auto run = [&](StepModel& model, int64_t k, Drafter* drafter) {
    EngineOptions o = options;
    o.speculative_tokens = k;
    o.drafter = drafter;
    o.adaptive_drafts = false;
    auto engine = Engine::start(model, o);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    auto stream = (*engine)->submit(prompt, greedy, {image});
    EXPECT_TRUE(stream.ok()) << stream.status().message();
    return test::drain_tokens(**stream);
  };
  const std::vector<int32_t> want = run(plain, 0, nullptr);
  auto drafter = MtpDrafter::create(with_head);
  ASSERT_TRUE(drafter.ok()) << drafter.status().message();
  // Every draft right: rounds of 2 accepted drafts, chained steps at generated positions.
  const std::vector<int32_t> truth = test::continued({prompt}, {want})[0];
  (*drafter)->replace_drafts = [&](DraftRequest& r) {
    r.drafts->clear();
    for (int64_t j = 0; j < r.k && r.tokens.size() + static_cast<size_t>(j) < truth.size(); ++j)
      r.drafts->push_back(truth[r.tokens.size() + static_cast<size_t>(j)]);
  };
  EXPECT_EQ(run(with_head, 2, drafter->get()), want);

  // Rows of the passes (step 0) by position: each has the main model's position, and a merger row iff
  // the next token is an image pad.
  int64_t rows_seen = 0, pads_seen = 0, chained = 0;
  for (const RecordingStepModel::Call& call : with_head.calls) {
    ASSERT_EQ(call.positions.size(), static_cast<size_t>(3 * call.rows)) << "a call of an image request without positions";
    for (int64_t i = 0; i < call.rows; ++i) {
      const int64_t p = call.start_pos + i;
      for (int64_t axis = 0; axis < 3; ++axis) {
        const int32_t expected = p < prompt_len ? plan->positions[static_cast<size_t>(p * 3 + axis)]
                                                : static_cast<int32_t>(p + plan->rope_delta);
        ASSERT_EQ(call.positions[static_cast<size_t>(i * 3 + axis)], expected) << "step " << call.step << ", position " << p;
      }
    }
    if (call.step > 0) {
      ++chained;
      EXPECT_TRUE(call.at.empty()) << "a chained step embeds a draft, never an image pad";
      continue;
    }
    rows_seen += call.rows;
    for (int64_t i = 0; i < call.rows; ++i) {
      const int64_t next = call.start_pos + i + 1;
      const bool next_is_pad = next >= first_pad && next < first_pad + 6;
      const auto found = std::find(call.at.begin(), call.at.end(), static_cast<int32_t>(i));
      ASSERT_EQ(found != call.at.end(), next_is_pad) << "row at position " << call.start_pos + i;
      if (!next_is_pad) continue;
      ++pads_seen;
      const auto k = static_cast<size_t>(found - call.at.begin());
      EXPECT_TRUE(std::equal(call.embedding_rows.begin() + static_cast<int64_t>(k) * H,
                             call.embedding_rows.begin() + static_cast<int64_t>(k + 1) * H,
                             merger->begin() + (next - first_pad) * H))
          << "row at position " << call.start_pos + i << " carries another row than pad " << next - first_pad << "'s";
    }
  }
  EXPECT_GE(rows_seen, prompt_len) << "the passes cover the prompt";
  EXPECT_EQ(pads_seen, 6);
  EXPECT_GT(chained, 0);
}

}  // namespace
}  // namespace ds::mtp_image_inputs_test
