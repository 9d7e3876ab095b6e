// FakeStepModel: a StepModel whose next-token logits are a pure function of the whole token
// history, computed from the caches the engine hands it — a running hash in the sequence's
// DeltaNet state slot, and every token id stored at its position in the paged KV. Each call
// re-reads the KV through the block table and checks it against the state, so a wrong block table,
// a shared block, a reused slot or a skipped position fails the forward instead of passing quietly.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "engine/step_model.h"
#include "kernels/ref/ref_backend.h"
#include "util/random.h"

namespace ds::test {

class FakeStepModel : public StepModel {
 public:
  static constexpr int64_t kVocab = 97;

  int64_t vocab_size() const override { return kVocab; }
  CacheGeometry cache_geometry() const override {
    CacheGeometry g;
    g.attention_layers = g.num_kv_heads = g.head_dim = 1;
    g.deltanet_layers = g.conv_channels = g.conv_history = g.num_v_heads = g.k_dim = g.v_dim = 1;
    return g;
  }
  int64_t max_position_embeddings() const override { return max_positions; }
  Backend& backend() override { return backend_; }
  void reserve(int64_t max_batch_tokens) override { capacity = max_batch_tokens; }

  // The history hash after `token` (exact in float: stays below 2^24).
  static float fold(float hash, int32_t token) { return std::fmod(hash * 31.0f + static_cast<float>(token + 1), 65521.0f); }
  static void fill_logits(float hash, float* logits) {
    for (int64_t v = 0; v < kVocab; ++v) {
      uint64_t state = static_cast<uint64_t>(hash) * kVocab + static_cast<uint64_t>(v);
      logits[v] = static_cast<float>(splitmix64(state) >> 40) * (8.0f / 16777216.0f);
    }
  }

  Status forward(const ForwardBatch& batch, HybridCache& cache, float* logits) override {
    ++calls;
    tokens_computed += batch.total_tokens();
    if (step_time.count() > 0) std::this_thread::sleep_for(step_time);
    while (paused.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    const int64_t tokens = batch.total_tokens();
    if (tokens > capacity) return Status::errorf("batch of ", tokens, " tokens over the reserved ", capacity);
    max_call_tokens = std::max(max_call_tokens, tokens);
    max_call_sequences = std::max<int64_t>(max_call_sequences, static_cast<int64_t>(batch.sequences.size()));
    KvLayerView kv = cache.kv().layer(0);
    auto at = [&](const SequenceInput& s, int64_t pos) -> float& {
      return *kv.key_column<float>(s.block_table[static_cast<size_t>(pos / kv.block_size)], pos % kv.block_size, 0);
    };
    for (const SequenceInput& s : batch.sequences) {
      const auto n = static_cast<int64_t>(s.tokens.size());
      if (s.kind == StepKind::decode && n != 1) return Status::errorf("decode of ", n, " tokens");
      // Prefill chunks follow the 64-token grid; only the first after a decoded prefix-cache hit
      // (rule 4: it starts where a generation stopped) starts off it, and it ends on it or at the end.
      if (s.kind == StepKind::prefill && s.start_pos % 64 != 0 && (s.start_pos + n) % 64 != 0 && s.logits != LogitsRows::last)
        return Status::errorf("prefill chunk [", s.start_pos, ", ", s.start_pos + n, ") is off the 64-token grid");
      if (static_cast<int64_t>(s.block_table.size()) * kv.block_size < s.start_pos + n) return Status::error("block table too short");
      float& seen = cache.states().conv(s.state_slot, 0)[0];
      float& hash = cache.states().recurrent(s.state_slot, 0)[0];
      if (seen != static_cast<float>(s.start_pos))
        return Status::errorf("state slot ", s.state_slot, " holds ", seen, " tokens, the call starts at ", s.start_pos);
      for (int64_t i = 0; i < n; ++i) {
        at(s, s.start_pos + i) = static_cast<float>(s.tokens[static_cast<size_t>(i)]);
        hash = fold(hash, s.tokens[static_cast<size_t>(i)]);
      }
      seen += static_cast<float>(n);
      float replay = 0.0f;
      for (int64_t p = 0; p < s.start_pos + n; ++p) replay = fold(replay, static_cast<int32_t>(at(s, p)));
      if (replay != hash) return Status::errorf("KV of slot ", s.state_slot, " disagrees with its state: corrupted cache");
      if (s.logits == LogitsRows::last) {
        fill_logits(hash, logits);
        logits += kVocab;
      } else if (s.logits == LogitsRows::all) {
        return Status::error("the fake model gives logits of the last row only");
      }
    }
    return {};
  }

  // Greedy continuation of `prompt` as the engine must produce it alone or in any batch.
  static std::vector<int32_t> greedy(const std::vector<int32_t>& prompt, int64_t max_tokens, const std::vector<int32_t>& stops) {
    float hash = 0.0f;
    for (int32_t t : prompt) hash = fold(hash, t);
    std::vector<int32_t> out;
    std::vector<float> logits(kVocab);
    while (static_cast<int64_t>(out.size()) < max_tokens) {
      fill_logits(hash, logits.data());
      const auto token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      out.push_back(token);
      if (std::find(stops.begin(), stops.end(), token) != stops.end()) break;
      hash = fold(hash, token);
    }
    return out;
  }

  int64_t max_positions = 1 << 20;
  std::chrono::microseconds step_time{0};  // a real step takes time: lets submissions pile up
  // While set, a step waits before computing: what a test submits meanwhile is admitted by the
  // next steps at the latest, however the test's thread is scheduled against the engine's.
  std::atomic<bool> paused{false};
  int64_t capacity = 0;
  int64_t calls = 0, max_call_tokens = 0, max_call_sequences = 0;
  std::atomic<int64_t> tokens_computed{0};  // every token of every call

 private:
  RefBackend backend_;  // the cache's copies
};

}  // namespace ds::test
