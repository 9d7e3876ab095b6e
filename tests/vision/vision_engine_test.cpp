// Images through the engine, on HF's tiny Qwen3_5ForConditionalGeneration (tests/fixtures/vision,
// fp32, reference backend): greedy continuations and logits equal HF's for the fixture prompts —
// alone, batched beside text-only requests, continued as a later turn — a prompt whose image runs
// across prefill chunks gives what one whole prefill gives, the tower runs once per image content,
// and the prefix cache hits a repeated image but never another image under the same token ids.
// Prompts HF did not record are checked against one direct forward of the model (SequenceRunner),
// the path vision_prompt_test.cpp holds to HF.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>

#include "engine/engine.h"
#include "engine/qwen35_step_model.h"
#include "kernels/ref/ref_backend.h"
#include "model/model_loader.h"
#include "model/sequence_runner.h"
#include "vision/mrope_positions.h"
#include "vision/prompt_image.h"
#include "vision/vision_model.h"
#include "vision_fixture.h"

namespace ds {
namespace {

using test::kVisionFixture;

constexpr double kLogitTolerance = 1e-4;  // the bound against HF: max |ours − HF| ÷ max |HF| per row
constexpr int32_t kVisionStart = 254, kVisionEnd = 255, kImagePad = 252;
constexpr int64_t kTextVocab = 250;  // text tokens of the test prompts: below the vision specials

// Counts the tower runs the engine asks for.
class CountingStepModel : public Qwen35StepModel {
 public:
  using Qwen35StepModel::Qwen35StepModel;
  Result<std::vector<float>> encode_image(const PromptImage& image) override {
    encodes.fetch_add(1);
    return Qwen35StepModel::encode_image(image);
  }
  std::atomic<int> encodes{0};
};

struct Output {
  std::vector<int32_t> tokens;
  std::vector<float> first_logits;  // the prompt's last position: what chose the first token
  std::vector<std::vector<float>> logits;  // every sampled row, in order
  int64_t cached_tokens = 0;
};

double relative_error(std::span<const float> got, std::span<const float> want) {
  double diff = 0, scale = 0;
  for (size_t v = 0; v < want.size(); ++v) {
    diff = std::max(diff, double(std::fabs(got[v] - want[v])));
    scale = std::max(scale, double(std::fabs(want[v])));
  }
  return diff / scale;
}

std::vector<int32_t> as_ids(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

// Drafts from known continuations (prompt + HF's greedy tokens): the true next tokens, or a wrong one
// at every other position, so verifies of image requests accept whole runs and stop inside them.
class KnownContinuationDrafter : public Drafter {
 public:
  KnownContinuationDrafter(std::vector<std::vector<int32_t>> truths, bool every_other_wrong, int32_t vocab)
      : truths_(std::move(truths)), every_other_wrong_(every_other_wrong), vocab_(vocab) {}
  Status propose(std::span<DraftRequest> requests, HybridCache&) override {
    for (DraftRequest& r : requests) {
      const std::vector<int32_t>* truth = nullptr;
      for (const auto& t : truths_)
        if (t.size() >= r.tokens.size() && std::equal(r.tokens.begin(), r.tokens.end(), t.begin())) truth = &t;
      for (int64_t j = 0; j < r.k; ++j) {
        const size_t at = r.tokens.size() + static_cast<size_t>(j);
        const int32_t right = truth && at < truth->size() ? (*truth)[at] : 0;
        const bool wrong = every_other_wrong_ && (rounds_ + j) % 2 == 1;
        r.drafts->push_back(wrong ? (right + 1) % vocab_ : right);
      }
      ++rounds_;
    }
    return {};
  }

 private:
  std::vector<std::vector<int32_t>> truths_;
  bool every_other_wrong_;
  int32_t vocab_;
  int64_t rounds_ = 0;
};

class VisionEngine : public ::testing::Test {
 protected:
  RefBackend backend_;
  LoadedModel loaded_;
  std::unique_ptr<VisionModel> vision_;
  std::unique_ptr<CountingStepModel> step_;
  test::VisionReference ref_;
  std::mutex logits_mutex_;
  std::map<uint64_t, std::vector<std::vector<float>>> logits_;  // by request id: every sampled row

  void SetUp() override {
    auto loaded = load_model(kVisionFixture.string(), backend_, ComputeMode::f32);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    loaded_ = std::move(loaded).value();
    auto vision = load_vision_model(*loaded_.checkpoint, loaded_.config, kVisionFixture.string());
    ASSERT_TRUE(vision.ok()) << vision.status().message();
    vision_ = std::move(vision).value();
    step_ = std::make_unique<CountingStepModel>(*loaded_.model);
    step_->attach_vision(*vision_);
  }
  int64_t vocab() const { return loaded_.config.text.vocab_size; }

  std::unique_ptr<Engine> start(SchedulerLimits limits = {256, 16}, StepModel* model = nullptr,
                                uint64_t cache_memory = 16 << 20, uint64_t prefix_cache_memory = 4 << 20,
                                int64_t speculative_tokens = 0, Drafter* drafter = nullptr) {
    EngineOptions options;
    options.speculative_tokens = speculative_tokens;
    options.drafter = drafter;
    options.adaptive_drafts = false;  // every round verifies k drafts
    options.cache_memory = cache_memory;
    options.prefix_cache_memory = prefix_cache_memory;
    options.limits = limits;
    options.logits_hook = [this](uint64_t id, std::span<const int32_t>, std::span<const int32_t>, std::span<float> logits) {
      std::lock_guard lock(logits_mutex_);
      logits_[id].emplace_back(logits.begin(), logits.end());
    };
    auto engine = Engine::start(model ? *model : *step_, options);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    return std::move(engine).value();
  }

  PromptImage image(const std::string& name, const PreprocessorConfig* config = nullptr) {
    auto prepared = prepare_image(test::read_image_file(name), ImageLimits{}, config ? *config : vision_->preprocessor);
    EXPECT_TRUE(prepared.ok()) << prepared.status().message();
    return std::move(prepared).value();
  }
  std::vector<PromptImage> images(const std::vector<std::string>& names) {
    std::vector<PromptImage> out;
    for (const auto& name : names) out.push_back(image(name));
    return out;
  }
  static SamplingParams greedy(int64_t max_tokens) {
    SamplingParams p;
    p.max_tokens = max_tokens;
    p.temperature = 0;
    p.ignore_eos = true;
    return p;
  }
  std::shared_ptr<RequestStream> submit(Engine& engine, std::vector<int32_t> ids, std::vector<PromptImage> imgs,
                                        int64_t max_tokens) {
    auto stream = engine.submit(std::move(ids), greedy(max_tokens), std::move(imgs));
    EXPECT_TRUE(stream.ok()) << stream.status().message();
    return stream.ok() ? *stream : nullptr;
  }
  Output drain(RequestStream& stream) {
    Output out;
    while (auto event = stream.next()) {
      for (const SampledToken& t : event->tokens) out.tokens.push_back(t.token);
      if (event->finish) {
        EXPECT_NE(*event->finish, FinishReason::error) << event->error;
      }
    }
    out.cached_tokens = stream.cached_tokens();
    std::lock_guard lock(logits_mutex_);
    out.logits = std::move(logits_[stream.id()]);
    logits_.erase(stream.id());  // ids restart in the next engine
    if (!out.logits.empty()) out.first_logits = out.logits.front();
    return out;
  }
  Output run(Engine& engine, std::vector<int32_t> ids, std::vector<PromptImage> imgs, int64_t max_tokens) {
    return drain(*submit(engine, std::move(ids), std::move(imgs), max_tokens));
  }

  // One direct forward over the whole prompt (tower over all images, rows at the pads, mRoPE), then
  // greedy decoding at cache length + rope_delta: vision_prompt_test's path.
  Output direct(std::span<const int32_t> ids, const std::vector<PromptImage>& imgs, int64_t max_tokens) {
    Output out;
    std::vector<float> pixel_values;
    std::vector<VisionGrid> grids;
    for (const PromptImage& im : imgs) {
      pixel_values.insert(pixel_values.end(), im.pixel_values->begin(), im.pixel_values->end());
      grids.push_back(im.grid);
    }
    std::vector<float> merged;
    if (!imgs.empty()) {
      auto tower = vision_->tower->forward(backend_, pixel_values, grids);
      EXPECT_TRUE(tower.ok()) << tower.status().message();
      merged = tower->merged;
    }
    auto positions = mrope_positions(ids, kImagePad, grids, vision_->merge_size());
    EXPECT_TRUE(positions.ok()) << positions.status().message();
    std::vector<int32_t> at;
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == kImagePad) at.push_back(static_cast<int32_t>(i));
    SequenceRunner runner(*loaded_.model, static_cast<int64_t>(ids.size()) + max_tokens, static_cast<int64_t>(ids.size()));
    std::vector<float> logits;
    EXPECT_TRUE(runner.feed(ids, positions->positions, at, merged, LogitsRows::last, logits).ok());
    out.first_logits = logits;
    for (int64_t step = 0; step < max_tokens; ++step) {
      const auto next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      out.tokens.push_back(next);
      if (step + 1 == max_tokens) break;
      const auto p = static_cast<int32_t>(runner.position() + positions->rope_delta);
      const int32_t pos[3] = {p, p, p};
      EXPECT_TRUE(runner.feed(std::span(&next, 1), pos, {}, {}, LogitsRows::last, logits).ok());
    }
    return out;
  }

  // HF's recorded prompt, its greedy continuation and the logits of its last position.
  struct HfPrompt {
    std::vector<int32_t> ids, greedy;
    std::vector<float> last_logits;
    std::vector<std::string> images;
  };
  HfPrompt hf(const std::string& name, std::vector<std::string> imgs) {
    HfPrompt p;
    p.ids = as_ids(ref_.values<int64_t>(name + ".input_ids"));
    p.greedy = as_ids(ref_.values<int64_t>(name + ".greedy"));
    const std::vector<float> logits = ref_.values<float>(name + ".logits");
    p.last_logits.assign(logits.end() - vocab(), logits.end());
    p.images = std::move(imgs);
    return p;
  }
  std::vector<HfPrompt> hf_prompts() {
    return {hf("one_image", {"rgb_64x96.png"}), hf("two_images", {"gray_80x112.png", "up_30x40.jpg"})};
  }
  void expect_hf(const Output& got, const HfPrompt& want, const std::string& what) {
    EXPECT_EQ(got.tokens, want.greedy) << what;
    ASSERT_EQ(got.first_logits.size(), want.last_logits.size()) << what;
    const double error = relative_error(got.first_logits, want.last_logits);
    EXPECT_LE(error, kLogitTolerance) << what;
    std::printf("%s: last prompt position's logits %.2e from HF's\n", what.c_str(), error);
  }
};

TEST_F(VisionEngine, OneImageAndTwoImagesOfDifferentSizesMatchHf) {
  auto engine = start();
  for (const HfPrompt& p : hf_prompts())
    expect_hf(run(*engine, p.ids, images(p.images), static_cast<int64_t>(p.greedy.size())), p,
              p.images.size() == 1 ? "one image" : "two images");
}

// A verify runs 1 + k decode tokens of an image request at once: each row must sit at its own position
// + rope_delta, so every sampled row's logits equal plain decoding's (greedy tokens alone would not
// show a shifted position: the fixture's rotary is too small to move them).
TEST_F(VisionEngine, SpeculativeVerifiesOfImageRequestsGivePlainDecodingsRows) {
  const std::vector<HfPrompt> prompts = hf_prompts();
  std::vector<std::vector<int32_t>> truths;
  for (const HfPrompt& p : prompts) {
    truths.push_back(p.ids);
    truths.back().insert(truths.back().end(), p.greedy.begin(), p.greedy.end());
  }
  std::vector<Output> plain;
  {
    auto engine = start();
    for (const HfPrompt& p : prompts) plain.push_back(run(*engine, p.ids, images(p.images), static_cast<int64_t>(p.greedy.size())));
  }
  for (const bool every_other_wrong : {false, true}) {
    for (const int64_t k : {1, 3}) {
      KnownContinuationDrafter drafter(truths, every_other_wrong, static_cast<int32_t>(vocab()));
      auto engine = start({256, 16}, nullptr, 16 << 20, 4 << 20, k, &drafter);
      std::vector<std::shared_ptr<RequestStream>> streams;  // both image requests in one batch
      for (const HfPrompt& p : prompts)
        streams.push_back(submit(*engine, p.ids, images(p.images), static_cast<int64_t>(p.greedy.size())));
      for (size_t i = 0; i < prompts.size(); ++i) {
        const std::string what = str_cat("k = ", k, every_other_wrong ? ", every other draft wrong" : ", every draft right",
                                         ", prompt ", i);
        const Output out = drain(*streams[i]);
        EXPECT_EQ(out.tokens, prompts[i].greedy) << what;
        ASSERT_EQ(out.logits.size(), plain[i].logits.size()) << what;
        for (size_t row = 0; row < out.logits.size(); ++row)
          EXPECT_LE(relative_error(out.logits[row], plain[i].logits[row]), 1e-5) << what << ", sampled row " << row;
      }
      EXPECT_GT(engine->counters().spec_accepted_tokens, 0) << "k = " << k << ": no draft was accepted";
    }
  }
}

// HF's text-only prompt and both image prompts in one batch, with more text-only requests of other
// lengths between them (held to what each gives alone, which the text fixtures hold to HF).
TEST_F(VisionEngine, ImageRequestsBatchedBesideTextOnlyRequestsMatchHfAndLeaveTheTextAlone) {
  std::vector<std::vector<int32_t>> texts;
  for (int i = 0; i < 3; ++i) texts.push_back(test::random_tokens(5 + 37 * i, kTextVocab, 50 + i));
  std::vector<Output> alone;
  {
    auto engine = start();
    for (const auto& t : texts) alone.push_back(run(*engine, t, {}, 8));
  }
  const std::vector<HfPrompt> prompts = hf_prompts();
  const HfPrompt hf_text = hf("text_only", {});
  auto engine = start({256, 16});
  std::vector<std::shared_ptr<RequestStream>> streams;  // text, HF text, image, text, image, text
  streams.push_back(submit(*engine, texts[0], {}, 8));
  streams.push_back(submit(*engine, hf_text.ids, {}, static_cast<int64_t>(hf_text.greedy.size())));
  for (size_t i = 0; i < prompts.size(); ++i) {
    streams.push_back(submit(*engine, prompts[i].ids, images(prompts[i].images),
                             static_cast<int64_t>(prompts[i].greedy.size())));
    streams.push_back(submit(*engine, texts[i + 1], {}, 8));
  }
  expect_hf(drain(*streams[0 + 1]), hf_text, "batched HF text-only prompt");
  for (size_t i = 0; i < prompts.size(); ++i)
    expect_hf(drain(*streams[2 + 2 * i]), prompts[i], str_cat("batched image prompt ", i));
  for (size_t i = 0; i < texts.size(); ++i) {
    const Output out = drain(*streams[i == 0 ? 0 : 1 + 2 * i]);
    EXPECT_EQ(out.tokens, alone[i].tokens) << "text-only request " << i;
    EXPECT_EQ(out.first_logits, alone[i].first_logits) << "text-only request " << i;
  }
}

TEST_F(VisionEngine, ImageInAnEarlierTurnKeepsTheDecodeOffset) {
  auto engine = start();
  // HF's greedy continuation of the prompt: the prompt plus its first k tokens continues with the rest.
  const HfPrompt one = hf_prompts()[0];
  for (size_t k : {1, 4}) {
    std::vector<int32_t> ids = one.ids;
    ids.insert(ids.end(), one.greedy.begin(), one.greedy.begin() + static_cast<int64_t>(k));
    const Output out = run(*engine, ids, images(one.images), static_cast<int64_t>(one.greedy.size() - k));
    EXPECT_EQ(out.tokens, std::vector<int32_t>(one.greedy.begin() + static_cast<int64_t>(k), one.greedy.end()))
        << "prompt + HF's first " << k << " tokens";
  }
  // HF's second turn: the first turn (image, question, the model's answer) then a question longer than
  // a prefill chunk, with a second image of another size in the new turn — after the first turn ran
  // in the same engine, as a chat client sends it.
  const Output first = run(*engine, one.ids, images(one.images), 8);
  EXPECT_EQ(first.tokens, one.greedy);
  const HfPrompt second = hf("multi_turn", {"rgb_64x96.png", "gray_80x112.png"});
  ASSERT_TRUE(std::equal(one.ids.begin(), one.ids.end(), second.ids.begin()));
  ASSERT_TRUE(std::equal(first.tokens.begin(), first.tokens.end(), second.ids.begin() + static_cast<int64_t>(one.ids.size())))
      << "HF's second turn starts with the first turn and its answer";
  expect_hf(run(*engine, second.ids, images(second.images), static_cast<int64_t>(second.greedy.size())), second,
            "second turn");
}

TEST_F(VisionEngine, ImageSplitAcrossPrefillChunksGivesWhatOneWholePrefillGives) {
  // The fixture's processor keeps images at ≤ 8 tokens; upscaling here gives runs longer than a chunk.
  PreprocessorConfig large = vision_->preprocessor;
  large.min_pixels = 256 * 384;
  large.max_pixels = 256 * 384;
  std::vector<PromptImage> imgs{image("rgb_64x96.png", &large), image("up_30x40.jpg")};
  const int64_t big = image_token_count(imgs[0].grid, vision_->merge_size());
  ASSERT_GT(big, 64) << "the image's run must be longer than a 64-token chunk";
  std::vector<int32_t> ids = test::random_tokens(40, kTextVocab, 3);
  ids.push_back(kVisionStart);
  ids.insert(ids.end(), static_cast<size_t>(big), kImagePad);
  ids.push_back(kVisionEnd);
  const std::vector<int32_t> middle = test::random_tokens(20, kTextVocab, 4);
  ids.insert(ids.end(), middle.begin(), middle.end());
  ids.push_back(kVisionStart);
  ids.insert(ids.end(), static_cast<size_t>(image_token_count(imgs[1].grid, vision_->merge_size())), kImagePad);
  ids.push_back(kVisionEnd);
  ids.push_back(9);

  Output whole, chunked;
  {
    auto engine = start({1024, 1});
    whole = run(*engine, ids, imgs, 8);
  }
  {
    auto engine = start({65, 1});  // 64-token chunks: the big image spans three of them
    chunked = run(*engine, ids, imgs, 8);
  }
  EXPECT_EQ(chunked.tokens, whole.tokens);
  EXPECT_EQ(chunked.logits, whole.logits) << "chunked prefill is bit-identical on the 64-token grid, every sampled row";
  const Output want = direct(ids, imgs, 8);
  EXPECT_EQ(whole.tokens, want.tokens);
  EXPECT_LE(relative_error(whole.first_logits, want.first_logits), kLogitTolerance);
}

TEST_F(VisionEngine, APreemptedImageRequestIsRecomputedWithItsPositions) {
  // Two 152-token image prompts generating 100 tokens each in a pool of 23 KV blocks (368 positions),
  // no prefix cache: one is preempted while decoding and recomputed from its tokens — one prefill over
  // its prompt and what it generated, the generated tokens at i + rope_delta — and gives what it gives alone.
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::vector<PromptImage>> imgs;
  for (const std::string name : {"rgb_64x96.png", "gray_80x112.png"}) {
    imgs.push_back({image(name)});
    std::vector<int32_t> ids = test::random_tokens(20, kTextVocab, prompts.size() + 20);
    ids.push_back(kVisionStart);
    ids.insert(ids.end(), static_cast<size_t>(image_token_count(imgs.back()[0].grid, vision_->merge_size())), kImagePad);
    ids.push_back(kVisionEnd);
    const std::vector<int32_t> tail = test::random_tokens(150 - static_cast<int64_t>(ids.size()), kTextVocab, prompts.size() + 30);
    ids.insert(ids.end(), tail.begin(), tail.end());
    prompts.push_back(std::move(ids));
  }
  std::vector<Output> alone;
  {
    auto engine = start();
    for (size_t i = 0; i < prompts.size(); ++i) alone.push_back(run(*engine, prompts[i], imgs[i], 100));
  }
  const CacheGeometry g = step_->cache_geometry();
  auto engine = start({256, 2}, nullptr, 2 * g.slot_bytes() + 23 * g.block_bytes(), 0);
  ASSERT_LT(engine->limits().capacity.num_blocks * g.block_size, 2 * (150 + 100)) << "the two must not fit together";
  const int encodes_before = step_->encodes.load();
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (size_t i = 0; i < prompts.size(); ++i) streams.push_back(submit(*engine, prompts[i], imgs[i], 100));
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Output out = drain(*streams[i]);
    EXPECT_EQ(out.tokens, alone[i].tokens) << "request " << i;
    // The recompute runs the chunked DeltaNet kernel over generated tokens: equal to rounding.
    ASSERT_EQ(out.logits.size(), alone[i].logits.size());
    double worst = 0;
    for (size_t row = 0; row < out.logits.size(); ++row) worst = std::max(worst, relative_error(out.logits[row], alone[i].logits[row]));
    EXPECT_LE(worst, 1e-5) << "request " << i << ": every sampled row's logits";
  }
  EXPECT_GT(engine->counters().preemptions, 0);
  EXPECT_EQ(step_->encodes.load(), encodes_before + 2) << "a preempted request keeps its merger rows";
}

TEST_F(VisionEngine, TheTowerRunsOncePerImageContent) {
  auto engine = start();
  std::vector<PromptImage> imgs = images({"rgb_64x96.png", "rgb_64x96.png"});
  const auto n = static_cast<size_t>(image_token_count(imgs[0].grid, vision_->merge_size()));
  std::vector<int32_t> ids{5, kVisionStart};
  ids.insert(ids.end(), n, kImagePad);
  ids.insert(ids.end(), {kVisionEnd, 6, kVisionStart});
  ids.insert(ids.end(), n, kImagePad);
  ids.insert(ids.end(), {kVisionEnd, 7});
  const Output want = direct(ids, imgs, 6);
  const Output got = run(*engine, ids, std::move(imgs), 6);
  EXPECT_EQ(step_->encodes.load(), 1) << "the same image twice in one prompt runs the tower once";
  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_LE(relative_error(got.first_logits, want.first_logits), kLogitTolerance);
}

TEST_F(VisionEngine, PrefixCacheHitsTheSameImageAndNeverAnotherUnderTheSameTokenIds) {
  auto engine = start();
  const PromptImage original = image("rgb_64x96.png");
  PromptImage other = original;  // the same size and token ids, other pixels
  {
    auto decoded = decode_image(test::read_image_file("rgb_64x96.png"));
    ASSERT_TRUE(decoded.ok());
    for (uint8_t& v : decoded->pixels) v = static_cast<uint8_t>(255 - v);
    auto prepared = prepare_image(*decoded, vision_->preprocessor);
    ASSERT_TRUE(prepared.ok());
    other = std::move(prepared).value();
  }
  ASSERT_NE(other.content_hash, original.content_hash);
  std::vector<int32_t> ids = test::random_tokens(20, kTextVocab, 11);
  ids.push_back(kVisionStart);
  ids.insert(ids.end(), static_cast<size_t>(image_token_count(original.grid, vision_->merge_size())), kImagePad);
  ids.push_back(kVisionEnd);
  const std::vector<int32_t> tail = test::random_tokens(130, kTextVocab, 12);
  ids.insert(ids.end(), tail.begin(), tail.end());  // 158 tokens: the prompt's end snapshot sits at 128

  const Output cold = run(*engine, ids, {original}, 6);
  EXPECT_EQ(cold.cached_tokens, 0);
  EXPECT_EQ(step_->encodes.load(), 1);
  const Output warm = run(*engine, ids, {original}, 6);
  EXPECT_EQ(warm.cached_tokens, 128) << "the same image hits";
  EXPECT_EQ(step_->encodes.load(), 1) << "a hit covering the image needs no tower run";
  EXPECT_EQ(warm.tokens, cold.tokens);
  EXPECT_EQ(warm.logits, cold.logits) << "an exact hit is bit for bit a cold run, every sampled row";

  const Output swapped = run(*engine, ids, {other}, 6);
  EXPECT_EQ(swapped.cached_tokens, 0) << "another image under the same token ids must not hit";
  EXPECT_EQ(step_->encodes.load(), 2);
  const Output want = direct(ids, {other}, 6);
  EXPECT_EQ(swapped.tokens, want.tokens);
  EXPECT_LE(relative_error(swapped.first_logits, want.first_logits), kLogitTolerance);
  EXPECT_NE(swapped.first_logits, cold.first_logits) << "the image must matter to the logits";
}

TEST_F(VisionEngine, RefusesImagesThatDoNotMatchThePromptAndImagesToATextOnlyModel) {
  auto engine = start();
  const PromptImage im = image("rgb_64x96.png");
  const auto n = static_cast<size_t>(image_token_count(im.grid, vision_->merge_size()));
  std::vector<int32_t> ids{1, kVisionStart};
  ids.insert(ids.end(), n, kImagePad);
  ids.push_back(kVisionEnd);

  auto no_image = engine->submit(ids, greedy(2));
  ASSERT_FALSE(no_image.ok());
  EXPECT_NE(no_image.status().message().find("carries no image"), std::string::npos) << no_image.status().message();
  std::vector<int32_t> short_run = ids;
  short_run.erase(short_run.begin() + 2);
  auto mismatch = engine->submit(short_run, greedy(2), {im});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("image 1 of grid"), std::string::npos) << mismatch.status().message();
  auto extra = engine->submit(ids, greedy(2), {im, im});
  ASSERT_FALSE(extra.ok()) << "two images, one run";

  Qwen35StepModel text_only(*loaded_.model);  // no tower attached: what a text-only checkpoint gives
  auto text_engine = start({256, 16}, &text_only);
  auto refused = text_engine->submit(ids, greedy(2), {im});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("takes text only"), std::string::npos) << refused.status().message();
  // Text-only requests to a vision checkpoint keep the text path.
  const std::vector<int32_t> text = test::random_tokens(30, kTextVocab, 1);
  EXPECT_EQ(run(*engine, text, {}, 4).tokens, run(*text_engine, text, {}, 4).tokens);
}

TEST(RequestImages, EachChunkGetsItsPositionsAndItsSliceOfEveryImagesRows) {
  // Prompt: 2 text, image A (grid 1 x 4 x 4: 4 tokens), 1 text, image B (1 x 2 x 4: 2 tokens), 1 text.
  std::vector<PromptImage> images(2);
  images[0].grid = {1, 4, 4};
  images[1].grid = {1, 2, 4};
  images[0].content_hash = 11;
  images[1].content_hash = 22;
  const std::vector<int32_t> prompt{1, 2, kImagePad, kImagePad, kImagePad, kImagePad, 3, kImagePad, kImagePad, 4};
  auto planned = plan_request_images(prompt, images, kImagePad, 2);
  ASSERT_TRUE(planned.ok()) << planned.status().message();
  RequestImages& r = *planned;
  EXPECT_EQ(r.first, (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(r.count, (std::vector<int64_t>{4, 2}));
  const std::vector<KeyedContent> keyed = r.keyed_contents();
  ASSERT_EQ(keyed.size(), 2u);
  EXPECT_EQ(keyed[1].at, 7);
  EXPECT_EQ(keyed[1].hash, 22u);
  // A's run: positions p = 2 + (0, r, c), then p += 2; text 3 at 4; B at 5 + (0, r, c), p += 2 → 4 at 7.
  EXPECT_EQ(r.rope_delta, 8 - 10);
  EXPECT_EQ(r.missing(0, 3), (std::vector<size_t>{0}));
  EXPECT_EQ(r.missing(3, 7), (std::vector<size_t>{0, 1}));
  r.rows[0] = std::make_shared<const std::vector<float>>(std::vector<float>{10, 11, 20, 21, 30, 31, 40, 41});  // [4, 2]
  r.rows[1] = std::make_shared<const std::vector<float>>(std::vector<float>{50, 51, 60, 61});                  // [2, 2]
  EXPECT_TRUE(r.missing(0, 10).empty());

  SequenceInput input;
  r.fill(input, 3, 5, 10);  // tokens 3..7: A's last three pads, the text, B's first pad
  EXPECT_EQ(std::vector<int32_t>(input.embedding_at.begin(), input.embedding_at.end()), (std::vector<int32_t>{0, 1, 2, 4}));
  EXPECT_EQ(std::vector<float>(input.embedding_rows.begin(), input.embedding_rows.end()),
            (std::vector<float>{20, 21, 30, 31, 40, 41, 50, 51}));
  EXPECT_EQ(std::vector<int32_t>(input.positions.begin(), input.positions.end()),
            (std::vector<int32_t>{2, 2, 3, 2, 3, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5}));
  r.fill(input, 9, 3, 10);  // the last prompt token, then two generated tokens at i + rope_delta
  EXPECT_TRUE(input.embedding_at.empty());
  EXPECT_EQ(std::vector<int32_t>(input.positions.begin(), input.positions.end()),
            (std::vector<int32_t>{7, 7, 7, 8, 8, 8, 9, 9, 9}));

  auto wrong = plan_request_images(prompt, std::vector<PromptImage>(images.begin(), images.begin() + 1), kImagePad, 2);
  EXPECT_FALSE(wrong.ok()) << "two runs, one image";
  auto none = plan_request_images(prompt, {}, kImagePad, 2);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("prompt token 2 is the image-pad token"), std::string::npos) << none.status().message();
  auto text = plan_request_images(std::vector<int32_t>{1, 2, 3}, {}, kImagePad, 2);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(text->empty());
  EXPECT_TRUE(text->positions.empty()) << "a text-only request carries nothing";
}

}  // namespace
}  // namespace ds
