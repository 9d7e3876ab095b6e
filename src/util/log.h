// Logging to stderr with a level chosen once by the application (--verbose / --quiet).
// The level is the one process-wide setting in the project; everything else is passed explicitly.
#pragma once

#include <string>

#include "util/str_cat.h"

namespace ds::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, quiet = 4 };

void set_level(Level level);
Level level();
void write(Level level, const std::string& message);

template <typename... Args>
void debug(const Args&... args) {
  if (level() <= Level::debug) write(Level::debug, str_cat(args...));
}
template <typename... Args>
void info(const Args&... args) {
  if (level() <= Level::info) write(Level::info, str_cat(args...));
}
template <typename... Args>
void warn(const Args&... args) {
  if (level() <= Level::warn) write(Level::warn, str_cat(args...));
}
template <typename... Args>
void error(const Args&... args) {
  if (level() <= Level::error) write(Level::error, str_cat(args...));
}

}  // namespace ds::log
