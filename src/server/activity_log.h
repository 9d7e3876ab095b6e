// ActivityLog: while the engine is busy, one line every `interval` on what it did in that interval —
// prompt and generation throughput, running and waiting requests, KV and snapshot use, the prefix
// cache's hit rate — like vLLM's periodic stats line. Silent while idle. Its own thread, stopped by
// the destructor.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine/engine.h"

namespace ds::server {

class ActivityLog {
 public:
  ActivityLog(const Engine& engine, std::chrono::milliseconds interval);
  ~ActivityLog();
  ActivityLog(const ActivityLog&) = delete;
  ActivityLog& operator=(const ActivityLog&) = delete;

 private:
  void loop();

  const Engine& engine_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// The line for what happened between `before` and `now`, `seconds` apart; false when nothing did
// (no tokens counted, nothing running or waiting).
bool log_activity(const EngineCounters& before, const EngineCounters& now, double seconds);

}  // namespace ds::server
