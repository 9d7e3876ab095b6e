// Logging to stderr: "[deltaserve] level message" lines, with elapsed seconds since start.
#include "util/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>

namespace ds::log {
namespace {
std::atomic<Level>& current_level() {
  static std::atomic<Level> level{Level::info};
  return level;
}
const std::chrono::steady_clock::time_point& start_time() {
  static const auto start = std::chrono::steady_clock::now();
  return start;
}
const char* level_name(Level level) {
  switch (level) {
    case Level::debug: return "debug";
    case Level::info: return "info ";
    case Level::warn: return "warn ";
    case Level::error: return "error";
    case Level::quiet: return "";
  }
  return "";
}
}  // namespace

void set_level(Level level) {
  start_time();
  current_level().store(level);
}
Level level() { return current_level().load(std::memory_order_relaxed); }

void write(Level level, const std::string& message) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time()).count();
  std::fprintf(stderr, "[%8.3f] %s %s\n", seconds, level_name(level), message.c_str());
}

}  // namespace ds::log
