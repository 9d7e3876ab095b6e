// Logging to stderr with a level and a format chosen once by the application (--verbose / --quiet,
// --log-format). The level and format are the process-wide settings in the project; everything
// else is passed explicitly.
//
// Text lines read "[seconds since start] level message". JSON lines (--log-format json, for log
// collectors) are one object each: {"time": seconds, "level": ..., "message": ...}, plus, for an
// event (log::event), its name and fields as typed members, so a collector needs no parsing of the
// message.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>

#include "util/str_cat.h"

namespace ds::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, quiet = 4 };
enum class Format { text, json };

void set_level(Level level);
Level level();
void set_format(Format format);
Format format();
void write(Level level, const std::string& message);

// One named field of an event: a count, a measure (NaN or infinite: JSON null), a flag or a string.
struct Field {
  std::string_view name;
  std::variant<int64_t, double, bool, std::string> value;
};
// A line about one thing that happened (a finished request, the periodic engine line): `message` is
// the text line; in JSON the object also has "event": name and each field.
void event(Level level, std::string_view name, const std::string& message, std::initializer_list<Field> fields);

// The JSON object of one line (what write / event print in the json format), without the newline.
std::string json_line(double seconds, Level level, std::string_view message, std::string_view event_name,
                      std::initializer_list<Field> fields);

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
