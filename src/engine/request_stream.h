// RequestStream: the thread-safe handle between the engine thread (which pushes tokens and the
// end) and a client thread (which waits for them and may cancel). Tokens that arrive while the
// client is busy are coalesced into one event, so a slow reader never slows the engine.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampler.h"

namespace ds {

enum class FinishReason { stop, length, cancelled, error };
const char* finish_reason_name(FinishReason reason);  // "stop", "length", "cancelled", "error"

struct StreamEvent {
  std::vector<SampledToken> tokens;    // new tokens since the previous event, in order
  std::optional<FinishReason> finish;  // set on the last event of a request
  std::optional<int32_t> stop_token;   // finish == stop: the stop token (also the last of `tokens`)
  std::string error;                   // finish == error: what went wrong
};

class RequestStream {
 public:
  using Clock = std::chrono::steady_clock;
  RequestStream(uint64_t id, int64_t prompt_tokens) : id_(id), prompt_tokens_(prompt_tokens) {}

  uint64_t id() const { return id_; }
  int64_t prompt_tokens() const { return prompt_tokens_; }
  // Prompt tokens found in the prefix cache (known once the request is admitted; 0 before).
  int64_t cached_tokens() const { return cached_tokens_.load(std::memory_order_relaxed); }
  // Waits for new tokens or the end; nullopt once the final event has been returned, or when
  // `timeout` passes first (then finished() is still false).
  std::optional<StreamEvent> next(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Asks the engine to stop this request; it ends with FinishReason::cancelled at its next step
  // (or normally, if it finished first). Safe from any thread, any number of times.
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancel_requested() const { return cancelled_.load(std::memory_order_relaxed); }
  bool finished() const;

  // Engine side.
  void set_cached_tokens(int64_t tokens) { cached_tokens_.store(tokens, std::memory_order_relaxed); }
  void push(SampledToken token);
  void finish(FinishReason reason, std::optional<int32_t> stop_token = std::nullopt, std::string error = {});

 private:
  const uint64_t id_;
  const int64_t prompt_tokens_;
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> cached_tokens_{0};
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  StreamEvent pending_;     // guarded by mutex_
  bool ended_ = false;      // the engine finished the request
  bool delivered_ = false;  // the final event was returned
};

}  // namespace ds
