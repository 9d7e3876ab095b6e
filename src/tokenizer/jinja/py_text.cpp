// Python str semantics on UTF-8 for the Jinja interpreter: code-point indices, case mapping, strip,
// replace, splitlines and slice indices as CPython's str / slice objects behave under jinja2.
#include "tokenizer/jinja/render_internal.h"

#include <utf8proc.h>

#include "tokenizer/utf8.h"

namespace ds::jinja::detail {

std::u32string to_u32(const std::string& s) {
  std::u32string out;
  for (size_t pos = 0; pos < s.size();) out += utf8::decode(s, pos);
  return out;
}

std::string from_u32(std::u32string_view s) {
  std::string out;
  for (char32_t c : s) utf8::append(out, c);
  return out;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

char32_t to_upper(char32_t c) { return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c))); }
char32_t to_lower(char32_t c) { return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))); }
bool is_cased_letter(char32_t c) { return to_upper(c) != c || to_lower(c) != c; }

std::string map_case(const std::string& s, bool upper) {
  std::string out;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t c = utf8::decode(s, pos);
    if (upper && c == U'ß') {
      out += "SS";
      continue;
    }
    utf8::append(out, upper ? to_upper(c) : to_lower(c));
  }
  return out;
}

std::string py_strip(const std::string& s, const Value* chars, bool left, bool right) {
  const std::u32string u = to_u32(s);
  std::u32string set;
  const bool custom = chars && chars->is_string();
  if (custom) set = to_u32(chars->as_string());
  auto strip = [&](char32_t c) { return custom ? set.find(c) != std::u32string::npos : py_isspace(c); };
  size_t b = 0, e = u.size();
  if (left) while (b < e && strip(u[b])) ++b;
  if (right) while (e > b && strip(u[e - 1])) --e;
  return from_u32(std::u32string_view(u).substr(b, e - b));
}

std::string py_replace(const std::string& s, const std::string& old, const std::string& with, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts `with` before every code point and at the end
    int64_t done = 0;
    size_t pos = 0;
    while (pos <= s.size()) {
      if (count >= 0 && done >= count) {
        out.append(s, pos, std::string::npos);
        break;
      }
      out += with;
      ++done;
      if (pos == s.size()) break;
      const size_t start = pos;
      utf8::decode(s, pos);
      out.append(s, start, pos - start);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(old, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += with;
    pos = hit + old.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

// str.splitlines() (no keepends).
std::vector<std::string> py_splitlines(const std::string& s) {
  std::vector<std::string> lines;
  std::string current;
  bool pending = false;
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t c = utf8::decode(s, pos);
    const bool is_break = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
                          c == 0x85 || c == 0x2028 || c == 0x2029;
    if (is_break) {
      if (c == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
      lines.push_back(std::move(current));
      current.clear();
      pending = false;
    } else {
      current.append(s, start, pos - start);
      pending = true;
    }
  }
  if (pending) lines.push_back(std::move(current));
  return lines;
}

// Python slice indices (slice.indices).
void slice_indices(int64_t length, const Value& start_v, const Value& stop_v, int64_t step, int64_t& start, int64_t& stop) {
  auto clamp = [&](const Value& v, int64_t def_pos, int64_t def_neg) -> int64_t {
    if (v.is_none() || v.is_undefined()) return step > 0 ? def_pos : def_neg;
    int64_t i = v.as_int();
    if (i < 0) {
      i += length;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= length) {
      i = step < 0 ? length - 1 : length;
    }
    return i;
  };
  start = clamp(start_v, 0, length - 1);
  stop = clamp(stop_v, length, -1);
}

}  // namespace ds::jinja::detail
