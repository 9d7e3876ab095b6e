// The prefix cache across restarts (--prefix-cache-dir): an engine started on the directory a
// previous one wrote hits what that one cached — what it evicted while running and what it held at
// shutdown — and computes exactly what a cold engine computes; files of another model or corrupted
// ones are skipped. Over the fake model (which re-reads the whole history from the KV blocks and
// checks it against the DeltaNet state, so a wrong reloaded block or state fails the step) and
// over a real micro checkpoint (bit-identical logits).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "engine/engine.h"
#include "engine/qwen35_step_model.h"
#include "fake_step_model.h"
#include "kernels/cpu/cpu_backend.h"
#include "micro_checkpoint.h"
#include "model/model_loader.h"
#include "test_util.h"

namespace ds {
namespace {

namespace fs = std::filesystem;
using test::FakeStepModel;

std::vector<int32_t> text(uint64_t seed, int64_t length, int32_t base, int32_t range) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < length; ++i) out.push_back(base + static_cast<int32_t>(splitmix64(seed) % range));
  return out;
}

std::vector<int32_t> concat(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int32_t> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

int64_t files_in(const fs::path& dir, const std::string& prefix) {
  int64_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) n += entry.path().filename().string().rfind(prefix, 0) == 0;
  return n;
}

class PrefixCacheRestart : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  FakeStepModel model_;

  EngineOptions options(uint64_t snapshots = 16, uint64_t identity = 7) {
    EngineOptions o;
    o.cache_memory = 4 << 20;
    const CacheGeometry g = model_.cache_geometry();
    o.prefix_cache_memory = snapshots * (g.slot_bytes() + g.block_bytes());  // a state and a KV tail each
    o.limits = {256, 8};
    o.prefix_cache_dir = tmp_ / "cache";
    o.model_identity = identity;
    return o;
  }
  std::unique_ptr<Engine> start(const EngineOptions& o) {
    auto engine = Engine::start(model_, o);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    return std::move(engine).value();
  }
  static std::vector<int32_t> run(Engine& engine, const std::vector<int32_t>& prompt, int64_t* cached) {
    SamplingParams params;
    params.max_tokens = 8;
    params.ignore_eos = true;
    auto stream = engine.submit(prompt, params);
    EXPECT_TRUE(stream.ok()) << stream.status().message();
    std::vector<int32_t> out;
    while (auto event = (*stream)->next()) {
      for (const SampledToken& t : event->tokens) out.push_back(t.token);
      if (event->finish) {
        EXPECT_EQ(*event->finish, FinishReason::length) << event->error;
      }
    }
    *cached = (*stream)->cached_tokens();
    return out;
  }
  static std::vector<int32_t> prompt(uint64_t seed) { return text(seed, 1000, 0, 80); }
};

TEST_F(PrefixCacheRestart, ANewEngineHitsWhatTheLastOneHeldAtShutdown) {
  int64_t cached = -1;
  run(*start(options()), prompt(1), &cached);
  EXPECT_EQ(cached, 0);
  EXPECT_GT(files_in(tmp_.path() / "cache", "snapshot-"), 0);
  EXPECT_GT(files_in(tmp_.path() / "cache", "block-"), 0);
  auto engine = start(options());
  EXPECT_GT(engine->counters().snapshots, 0) << "reloaded at start";
  EXPECT_EQ(run(*engine, prompt(1), &cached), FakeStepModel::greedy(prompt(1), 8, {}));
  EXPECT_EQ(cached, 960) << "the end-of-prompt snapshot of the previous engine";
}

TEST_F(PrefixCacheRestart, AContinuationAfterARestartStartsWhereTheGenerationStopped) {
  // Rule 4: the finished generation's decoded snapshot (1,000 + 7 computed tokens, off the block
  // grid) comes back with its exact flag and the KV tail of its last block; the fake model checks
  // every position of that block against the restored state.
  int64_t cached = -1;
  const std::vector<int32_t> generated = run(*start(options()), prompt(1), &cached);
  auto engine = start(options());
  const std::vector<int32_t> continued = concat(prompt(1), generated);
  EXPECT_EQ(run(*engine, continued, &cached), FakeStepModel::greedy(continued, 8, {}));
  EXPECT_EQ(cached, 1007);
  EXPECT_EQ(run(*engine, prompt(1), &cached), generated);
  EXPECT_EQ(cached, 960) << "the exact snapshot is found as before";
}

TEST_F(PrefixCacheRestart, WhatIsEvictedWhileRunningIsSpilledAndReloaded) {
  // Two snapshots and room for few blocks: each prompt evicts the one before it.
  EngineOptions small = options(2);
  small.cache_memory = 8 * model_.cache_geometry().slot_bytes() + 100 * model_.cache_geometry().block_bytes();
  int64_t cached = -1;
  {
    auto engine = start(small);
    for (uint64_t seed = 1; seed <= 4; ++seed) run(*engine, prompt(seed), &cached);
    EXPECT_GT(engine->counters().snapshot_evictions, 0);
    EXPECT_GT(engine->counters().block_evictions, 0);
    EXPECT_GT(files_in(tmp_.path() / "cache", "snapshot-"), 0) << "spilled before shutdown";
  }
  // A larger engine reloads all of them: the first prompt, evicted long before shutdown, hits.
  auto engine = start(options(64));
  EXPECT_EQ(run(*engine, prompt(1), &cached), FakeStepModel::greedy(prompt(1), 8, {}));
  EXPECT_EQ(cached, 960);
}

TEST_F(PrefixCacheRestart, AnIdleEngineHasWrittenWhatItHoldsSoAKillLosesNothing) {
  // While the engine is idle it writes what it took: a copy of the directory taken then (what a
  // SIGKILL would leave, no shutdown flush) gives a new engine the hit.
  int64_t cached = -1;
  auto first = start(options());
  run(*first, prompt(1), &cached);
  const fs::path dir = tmp_.path() / "cache", killed = tmp_.path() / "killed";
  for (int i = 0; i < 500 && files_in(dir, "snapshot-") < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  fs::copy(dir, killed);
  EXPECT_GE(files_in(killed, "snapshot-"), 2) << "the prompt-end and generation-end snapshots, written while idle";
  EngineOptions o = options();
  o.prefix_cache_dir = killed;
  auto engine = start(o);
  EXPECT_EQ(run(*engine, prompt(1), &cached), FakeStepModel::greedy(prompt(1), 8, {}));
  EXPECT_EQ(cached, 960);
}

TEST_F(PrefixCacheRestart, FilesOfAnotherModelAreSkipped) {
  int64_t cached = -1;
  run(*start(options(16, 7)), prompt(1), &cached);
  auto engine = start(options(16, 8));
  EXPECT_EQ(engine->counters().snapshots, 0);
  EXPECT_EQ(run(*engine, prompt(1), &cached), FakeStepModel::greedy(prompt(1), 8, {}));
  EXPECT_EQ(cached, 0);
}

TEST_F(PrefixCacheRestart, CorruptFilesAreSkippedAndRemoved) {
  int64_t cached = -1;
  run(*start(options()), prompt(1), &cached);
  for (const auto& entry : fs::directory_iterator(tmp_.path() / "cache")) {
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(entry.path()) - 1));
    file.put('\x5a');
  }
  auto engine = start(options());
  EXPECT_EQ(engine->counters().snapshots, 0);
  EXPECT_EQ(engine->counters().cached_blocks, 0);
  EXPECT_EQ(run(*engine, prompt(1), &cached), FakeStepModel::greedy(prompt(1), 8, {}));
  EXPECT_EQ(cached, 0);
}

TEST_F(PrefixCacheRestart, StartErrorsNameTheProblem) {
  EngineOptions unknown = options();
  unknown.model_identity = 0;
  auto engine = Engine::start(model_, unknown);
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().message().find("model's identity"), std::string::npos) << engine.status().message();
  std::ofstream(tmp_ / "file") << "x";
  EngineOptions under_a_file = options();
  under_a_file.prefix_cache_dir = tmp_ / "file/cache";
  engine = Engine::start(model_, under_a_file);
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().message().find("--prefix-cache-dir"), std::string::npos) << engine.status().message();
}

// Over a real micro checkpoint: a restarted engine's hit gives the logits of a cold run bit for bit.
TEST(PrefixCacheRestartOnModel, AHitAfterARestartEqualsColdBitForBit) {
  test::TempDir tmp;
  test::MicroOptions micro;
  micro.layers = 8;  // LLLF LLLF
  test::write_micro_checkpoint(tmp / "m", micro);
  CpuBackend backend(detect_isa(), 2);
  auto loaded = load_model(tmp / "m", backend, ComputeMode::fast);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Qwen35StepModel step_model(*loaded->model);
  std::mutex mutex;
  std::map<uint64_t, std::vector<std::vector<float>>> logits;  // by request id
  auto start = [&](bool persistent) {
    logits.clear();
    EngineOptions o;
    o.cache_memory = 64 << 20;
    o.prefix_cache_memory = persistent ? 32 << 20 : 0;
    o.limits = {256, 8};
    o.prefix_cache_dir = persistent ? tmp / "cache" : "";
    o.model_identity = 99;
    o.logits_hook = [&](uint64_t id, std::span<const int32_t>, std::span<const int32_t>, std::span<float> row) {
      std::lock_guard lock(mutex);
      logits[id].emplace_back(row.begin(), row.end());
    };
    auto engine = Engine::start(step_model, o);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    return std::move(engine).value();
  };
  struct Output {
    std::vector<int32_t> tokens;
    std::vector<std::vector<float>> logits;
    int64_t cached = 0;
  };
  auto run = [&](Engine& engine, const std::vector<int32_t>& prompt) {
    SamplingParams params;
    params.max_tokens = 6;
    params.ignore_eos = true;
    auto stream = *engine.submit(prompt, params);
    Output out;
    while (auto event = stream->next())
      for (const SampledToken& t : event->tokens) out.tokens.push_back(t.token);
    out.cached = stream->cached_tokens();
    std::lock_guard lock(mutex);
    out.logits = logits[stream->id()];
    return out;
  };
  auto expect_equal = [](const Output& a, const Output& b) {
    EXPECT_EQ(a.tokens, b.tokens);
    ASSERT_EQ(a.logits.size(), b.logits.size());
    for (size_t i = 0; i < a.logits.size(); ++i) EXPECT_EQ(a.logits[i], b.logits[i]) << "logits row " << i;
  };
  const std::vector<int32_t> donor = text(7, 300, 10, 500);
  const std::vector<int32_t> target = concat(donor, text(8, 50, 10, 500));  // the prompt continued
  const Output cold = run(*start(false), target);
  const Output donor_output = run(*start(true), donor);  // writes the cache at shutdown
  const Output warm = run(*start(true), target);
  EXPECT_EQ(warm.cached, 256);
  expect_equal(warm, cold);

  // A continuation of the donor's completion starts from its decoded (rule 4) snapshot, tail
  // included: after a restart exactly as in the engine that took it.
  std::filesystem::remove_all(tmp / "cache");
  const std::vector<int32_t> continued = concat(concat(donor, donor_output.tokens), text(9, 20, 10, 500));
  Output same_engine;
  {
    auto engine = start(true);
    run(*engine, donor);
    same_engine = run(*engine, continued);
  }
  std::filesystem::remove_all(tmp / "cache");
  run(*start(true), donor);
  const Output restarted = run(*start(true), continued);
  EXPECT_EQ(same_engine.cached, 305) << "300 prompt + 5 computed generated tokens";
  EXPECT_EQ(restarted.cached, same_engine.cached);
  expect_equal(restarted, same_engine);
}

}  // namespace
}  // namespace ds
