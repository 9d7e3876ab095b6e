// Text without its leading and trailing whitespace (header values, lines of key files).
#pragma once

#include <cctype>
#include <string_view>

namespace ds {

inline std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace ds
