// ZmqEventPublisher: vLLM's ZMQ KV event publisher, so its subscribers (llm-d's router, Dynamo,
// vLLM's own example) read deltaserve unchanged. A PUB socket sends each batch as three frames —
// topic, an 8-byte big-endian sequence number (0, 1, 2, ... per process), the msgpack batch — and
// an optional ROUTER socket replays missed batches: a request [identity, "", start sequence (8
// bytes)] is answered with every kept batch from there, [identity, "", sequence, batch] each,
// then [identity, "", -1 (8 bytes), ""]. Events are queued by any thread and sent by the
// publisher's own; events queued together go out as one batch.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kv_events/kv_event_batch.h"
#include "util/status.h"

namespace ds::kv_events {

struct KvEventsConfig {
  // The PUB socket. Bound when it names a wildcard host (tcp://*:5557, tcp://[::]:5557) or is
  // ipc:// or inproc://, else connected (a subscriber that binds, as llm-d's central one): vLLM's rule.
  std::string endpoint;
  std::string replay_endpoint;   // the ROUTER socket, always bound; empty: no replay
  std::string topic;             // frame 1 of every message; llm-d reads "kv@<pod>@<model>"
  int64_t buffer_steps = 10000;  // batches kept for replay
  int hwm = 100000;              // messages the PUB socket queues per subscriber before dropping
};

class ZmqEventPublisher {
 public:
  // Opens the sockets (an endpoint that cannot be bound is an error naming it) and starts the
  // sending thread. The first batch is [AllBlocksCleared]: whatever a subscriber held for this
  // topic is gone with the last process.
  static Result<std::unique_ptr<ZmqEventPublisher>> open(const KvEventsConfig& config);
  // Sends [AllBlocksCleared] after what is queued (the cache dies with the process), then closes,
  // giving subscribers up to a second to take the last batches.
  ~ZmqEventPublisher();
  ZmqEventPublisher(const ZmqEventPublisher&) = delete;
  ZmqEventPublisher& operator=(const ZmqEventPublisher&) = delete;

  void publish(KvEvent event);
  const KvEventsConfig& config() const { return config_; }

 private:
  ZmqEventPublisher(KvEventsConfig config, void* context, void* pub, void* replay);
  void run();
  void send(std::vector<KvEvent> events);
  void serve_replay();

  const KvEventsConfig config_;
  void* context_;
  void* pub_;
  void* replay_;  // null: no replay socket
  // Publisher thread only:
  uint64_t next_sequence_ = 0;
  std::deque<std::pair<uint64_t, std::string>> kept_;  // (sequence, payload), at most buffer_steps

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<KvEvent> queued_;  // guarded by mutex_
  bool closing_ = false;         // guarded by mutex_
  std::thread thread_;
};

}  // namespace ds::kv_events
