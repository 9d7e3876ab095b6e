// Logging to stderr, one line per write (a single fprintf, so lines of concurrent threads never mix).
#include "util/log.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace ds::log {
namespace {
std::atomic<Level>& current_level() {
  static std::atomic<Level> level{Level::info};
  return level;
}
std::atomic<Format>& current_format() {
  static std::atomic<Format> format{Format::text};
  return format;
}
const std::chrono::steady_clock::time_point& start_time() {
  static const auto start = std::chrono::steady_clock::now();
  return start;
}
double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time()).count();
}
const char* level_name(Level level) {
  switch (level) {
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warn: return "warn";
    case Level::error: return "error";
    case Level::quiet: return "";
  }
  return "";
}

// s as a JSON string literal; bytes that are not valid UTF-8 become U+FFFD, so the line always parses.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      const size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
      bool valid = length >= 2 && c <= 0xf4 && i + length <= s.size();
      for (size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
      if (valid) {
        out.append(s.substr(i, length));
        i += length;
      } else {
        out += "\xef\xbf\xbd";
        ++i;
      }
    }
  }
  out += '"';
}

void append_number(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  out += text;
}

void print(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

std::string text_line(double seconds, Level level, const std::string& message) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%8.3f] %-5s ", seconds, level_name(level));
  return stamp + message;
}
}  // namespace

void set_level(Level level) {
  start_time();
  current_level().store(level);
}
Level level() { return current_level().load(std::memory_order_relaxed); }
void set_format(Format format) { current_format().store(format); }
Format format() { return current_format().load(std::memory_order_relaxed); }

std::string json_line(double seconds, Level level, std::string_view message, std::string_view event_name,
                      std::initializer_list<Field> fields) {
  std::string out = "{\"time\": ";
  append_number(out, std::round(seconds * 1000.0) / 1000.0);
  out += ", \"level\": ";
  append_json_string(out, level_name(level));
  if (!event_name.empty()) {
    out += ", \"event\": ";
    append_json_string(out, event_name);
  }
  out += ", \"message\": ";
  append_json_string(out, message);
  for (const Field& field : fields) {
    out += ", ";
    append_json_string(out, field.name);
    out += ": ";
    if (const auto* count = std::get_if<int64_t>(&field.value)) out += std::to_string(*count);
    else if (const auto* measure = std::get_if<double>(&field.value)) append_number(out, *measure);
    else if (const auto* flag = std::get_if<bool>(&field.value)) out += *flag ? "true" : "false";
    else append_json_string(out, std::get<std::string>(field.value));
  }
  out += '}';
  return out;
}

void write(Level level, const std::string& message) {
  const double seconds = seconds_since_start();
  print(format() == Format::json ? json_line(seconds, level, message, "", {}) : text_line(seconds, level, message));
}

void event(Level level, std::string_view name, const std::string& message, std::initializer_list<Field> fields) {
  if (log::level() > level) return;
  const double seconds = seconds_since_start();
  print(format() == Format::json ? json_line(seconds, level, message, name, fields) : text_line(seconds, level, message));
}

}  // namespace ds::log
