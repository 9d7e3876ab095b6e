// ZmqEventPublisher over libzmq's C API. Only the publisher thread touches the sockets (ZeroMQ
// sockets are not thread-safe); it sleeps on a condition variable, waking every 20 ms to answer
// replay requests when a replay socket exists.
#include "kv_events/zmq_event_publisher.h"

#include <zmq.h>

#include <array>
#include <cerrno>
#include <chrono>

#include "util/log.h"

namespace ds::kv_events {
namespace {

constexpr auto kReplayPoll = std::chrono::milliseconds(20);
constexpr int kLingerMs = 1000;  // how long closing waits for subscribers to take the last batches

bool binds(const std::string& endpoint) {
  return endpoint.find('*') != std::string::npos || endpoint.find("::") != std::string::npos ||
         endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://");
}

std::array<unsigned char, 8> big_endian(uint64_t value) {
  std::array<unsigned char, 8> out{};
  for (int i = 7; i >= 0; --i, value >>= 8) out[static_cast<size_t>(i)] = static_cast<unsigned char>(value & 0xff);
  return out;
}

uint64_t from_big_endian(const unsigned char* bytes) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = value << 8 | bytes[i];
  return value;
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Sends frames as one message; false when the socket refused (logged by the caller).
bool send_frames(void* socket, std::initializer_list<std::pair<const void*, size_t>> frames) {
  size_t i = 0;
  for (const auto& [data, size] : frames) {
    const int flags = ++i < frames.size() ? ZMQ_SNDMORE : 0;
    if (zmq_send(socket, data, size, flags) < 0) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<ZmqEventPublisher>> ZmqEventPublisher::open(const KvEventsConfig& config) {
  if (config.endpoint.empty()) return Status::error("--kv-events-endpoint: expected a ZeroMQ endpoint such as tcp://*:5557, found none");
  void* context = zmq_ctx_new();
  void* pub = zmq_socket(context, ZMQ_PUB);
  void* replay = nullptr;
  auto fail = [&](const std::string& what, const std::string& endpoint) {
    const std::string why = zmq_strerror(zmq_errno());
    for (void* socket : {pub, replay})
      if (socket) zmq_close(socket);
    zmq_ctx_term(context);
    return Status::errorf(what, " ", endpoint, ": ", why);
  };
  const int linger = kLingerMs;
  zmq_setsockopt(pub, ZMQ_SNDHWM, &config.hwm, sizeof(config.hwm));
  zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof(linger));
  if (binds(config.endpoint) ? zmq_bind(pub, config.endpoint.c_str()) != 0 : zmq_connect(pub, config.endpoint.c_str()) != 0)
    return fail(binds(config.endpoint) ? "--kv-events-endpoint: cannot bind" : "--kv-events-endpoint: cannot connect to", config.endpoint);
  if (!config.replay_endpoint.empty()) {
    replay = zmq_socket(context, ZMQ_ROUTER);
    zmq_setsockopt(replay, ZMQ_LINGER, &linger, sizeof(linger));
    if (zmq_bind(replay, config.replay_endpoint.c_str()) != 0)
      return fail("--kv-events-replay-endpoint: cannot bind", config.replay_endpoint);
  }
  std::unique_ptr<ZmqEventPublisher> publisher(new ZmqEventPublisher(config, context, pub, replay));
  publisher->publish(AllBlocksCleared{});
  return publisher;
}

ZmqEventPublisher::ZmqEventPublisher(KvEventsConfig config, void* context, void* pub, void* replay)
    : config_(std::move(config)), context_(context), pub_(pub), replay_(replay) {
  thread_ = std::thread([this] { run(); });
}

ZmqEventPublisher::~ZmqEventPublisher() {
  {
    std::lock_guard lock(mutex_);
    queued_.emplace_back(AllBlocksCleared{});
    closing_ = true;
  }
  wake_.notify_all();
  thread_.join();
  zmq_close(pub_);
  if (replay_) zmq_close(replay_);
  zmq_ctx_term(context_);  // waits up to the linger for queued messages
}

void ZmqEventPublisher::publish(KvEvent event) {
  {
    std::lock_guard lock(mutex_);
    queued_.push_back(std::move(event));
  }
  wake_.notify_one();
}

void ZmqEventPublisher::run() {
  for (;;) {
    std::vector<KvEvent> events;
    bool closing = false;
    {
      std::unique_lock lock(mutex_);
      auto ready = [&] { return closing_ || !queued_.empty(); };
      if (replay_) wake_.wait_for(lock, kReplayPoll, ready);
      else wake_.wait(lock, ready);
      events.swap(queued_);
      closing = closing_;
    }
    if (!events.empty()) send(std::move(events));
    if (replay_) serve_replay();
    if (closing) return;
  }
}

void ZmqEventPublisher::send(std::vector<KvEvent> events) {
  const uint64_t sequence = next_sequence_++;
  std::string payload = encode_kv_event_batch(unix_seconds(), events);
  const auto seq = big_endian(sequence);
  if (!send_frames(pub_, {{config_.topic.data(), config_.topic.size()}, {seq.data(), seq.size()}, {payload.data(), payload.size()}}))
    log::warn("kv events: cannot send batch ", sequence, " on ", config_.endpoint, ": ", zmq_strerror(zmq_errno()));
  if (!replay_) return;
  kept_.emplace_back(sequence, std::move(payload));
  while (static_cast<int64_t>(kept_.size()) > config_.buffer_steps) kept_.pop_front();
}

void ZmqEventPublisher::serve_replay() {
  for (;;) {
    std::vector<std::string> frames;
    for (bool more = true; more;) {
      zmq_msg_t message;
      zmq_msg_init(&message);
      if (zmq_msg_recv(&message, replay_, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&message);
        if (frames.empty()) return;  // nothing waiting (EAGAIN)
        break;
      }
      frames.emplace_back(static_cast<const char*>(zmq_msg_data(&message)), zmq_msg_size(&message));
      more = zmq_msg_more(&message) != 0;
      zmq_msg_close(&message);
    }
    // [identity, "", start sequence]: a REQ or DEALER client with vLLM's empty delimiter.
    if (frames.size() != 3 || !frames[1].empty() || frames[2].size() != 8) {
      log::warn("kv events: ignoring a replay request of ", frames.size(),
                " frames (expected identity, an empty frame and an 8-byte start sequence)");
      continue;
    }
    const std::string& client = frames[0];
    const uint64_t start = from_big_endian(reinterpret_cast<const unsigned char*>(frames[2].data()));
    for (const auto& [sequence, payload] : kept_) {
      if (sequence < start) continue;
      const auto seq = big_endian(sequence);
      send_frames(replay_, {{client.data(), client.size()}, {"", 0}, {seq.data(), seq.size()}, {payload.data(), payload.size()}});
    }
    const auto end = big_endian(~uint64_t{0});  // -1 as a signed 8-byte integer
    send_frames(replay_, {{client.data(), client.size()}, {"", 0}, {end.data(), end.size()}, {"", 0}});
  }
}

}  // namespace ds::kv_events
