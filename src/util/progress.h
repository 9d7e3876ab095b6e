// Progress reporting for long jobs (checkpoint creation, loading): a single updating line on a
// terminal, a line every few seconds otherwise, so logs of CI runs stay readable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace ds {

class Progress {
 public:
  // `total` in `unit`s (e.g. bytes); `label` names the job ("writing model.safetensors").
  Progress(std::string label, uint64_t total, bool bytes_unit);
  ~Progress();
  void advance(uint64_t amount);  // thread-safe
  void finish();

 private:
  void print(bool final_line);

  std::string label_;
  uint64_t total_;
  bool bytes_unit_;
  bool tty_;
  bool finished_ = false;
  std::atomic<uint64_t> done_{0};
  std::mutex print_mutex_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
};

}  // namespace ds
