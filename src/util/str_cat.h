// str_cat: concatenates anything streamable into a string (GCC 12 has no <format>).
// Used for error messages and logs, never on a per-token hot path.
#pragma once

#include <sstream>
#include <string>

namespace ds {

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace ds
