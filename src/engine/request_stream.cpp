// RequestStream: one mutex-guarded pending event and a condition variable.
#include "engine/request_stream.h"

namespace ds {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::stop: return "stop";
    case FinishReason::length: return "length";
    case FinishReason::cancelled: return "cancelled";
    case FinishReason::error: return "error";
  }
  return "error";
}

std::optional<StreamEvent> RequestStream::next(std::optional<std::chrono::milliseconds> timeout) {
  std::unique_lock lock(mutex_);
  auto has_news = [&] { return delivered_ || ended_ || !pending_.tokens.empty(); };
  if (timeout) {
    if (!ready_.wait_for(lock, *timeout, has_news)) return std::nullopt;
  } else {
    ready_.wait(lock, has_news);
  }
  if (delivered_) return std::nullopt;
  StreamEvent event = std::move(pending_);
  pending_ = StreamEvent{};
  if (ended_) delivered_ = true;
  return event;
}

bool RequestStream::finished() const {
  std::lock_guard lock(mutex_);
  return delivered_;
}

void RequestStream::push(SampledToken token) {
  {
    std::lock_guard lock(mutex_);
    pending_.tokens.push_back(std::move(token));
  }
  ready_.notify_all();
}

void RequestStream::finish(FinishReason reason, std::optional<int32_t> stop_token, std::string error) {
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    ended_ = true;
    pending_.finish = reason;
    pending_.stop_token = stop_token;
    pending_.error = std::move(error);
  }
  ready_.notify_all();
}

}  // namespace ds
