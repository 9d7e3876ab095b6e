// Progress: rate-limited printing to stderr (10 Hz on a terminal, every 5 s otherwise).
#include "util/progress.h"

#include <unistd.h>

#include <cstdio>

#include "util/human.h"
#include "util/log.h"

namespace ds {

Progress::Progress(std::string label, uint64_t total, bool bytes_unit)
    : label_(std::move(label)),
      total_(total),
      bytes_unit_(bytes_unit),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(uint64_t amount) {
  done_.fetch_add(amount, std::memory_order_relaxed);
  const auto now = std::chrono::steady_clock::now();
  const auto interval = tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  std::unique_lock lock(print_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || now - last_print_ < interval) return;
  last_print_ = now;
  print(false);
}

void Progress::finish() {
  std::lock_guard lock(print_mutex_);
  if (finished_) return;
  finished_ = true;
  print(true);
}

void Progress::print(bool final_line) {
  if (log::level() > log::Level::info) return;
  const uint64_t done = done_.load();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double percent = total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0;
  std::string amount = bytes_unit_ ? human_bytes(done) + " / " + human_bytes(total_)
                                   : std::to_string(done) + " / " + std::to_string(total_);
  std::string rate;
  if (bytes_unit_ && seconds > 0) rate = ", " + human_bytes(static_cast<uint64_t>(done / seconds)) + "/s";
  char line[512];
  std::snprintf(line, sizeof line, "%s: %5.1f%% (%s%s, %.1f s)", label_.c_str(), percent, amount.c_str(),
                rate.c_str(), seconds);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s%s", line, final_line ? "\n" : "");
  } else if (final_line || percent < 100.0) {
    log::info(line);
  }
}

}  // namespace ds
