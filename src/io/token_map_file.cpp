// Token map files: a .npy array (told by its magic) or whitespace-separated text, then one check of
// the ids (range, duplicates, empty) whatever the form.
#include "io/token_map_file.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace ds {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";

// A field as a message shows it: at most 40 characters.
std::string shown(std::string_view field) {
  return field.size() <= 40 ? std::string(field) : std::string(field.substr(0, 40)) + "...";
}

// One id and where it came from ("line 3", "element 7"), for messages.
struct Entry {
  int64_t id;
  std::string where;
};

Result<std::vector<int32_t>> checked(const std::vector<Entry>& entries, const std::string& path, int64_t vocab) {
  if (entries.empty()) return Status::errorf("token map ", path, ": expected at least one token id, found none");
  std::vector<int32_t> ids;
  ids.reserve(entries.size());
  std::unordered_map<int64_t, size_t> first;  // id -> its entry
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.id < 0 || e.id >= vocab)
      return Status::errorf("token map ", path, ": token id ", e.id, " (", e.where, ") is out of range: expected 0 .. ",
                            vocab - 1, " (the model's vocabulary of ", vocab, ")");
    const auto [at, inserted] = first.emplace(e.id, i);
    if (!inserted)
      return Status::errorf("token map ", path, ": token id ", e.id, " appears twice (", entries[at->second].where,
                            " and ", e.where, "): expected each id once");
    ids.push_back(static_cast<int32_t>(e.id));
  }
  return ids;
}

// The value of `key` in a .npy header (a Python dict literal): the text after "'key':" up to the
// next top-level comma or the closing brace.
std::string header_value(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  size_t begin = header.find(':', at);
  if (begin == std::string::npos) return "";
  ++begin;
  while (begin < header.size() && header[begin] == ' ') ++begin;
  size_t end = begin;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if ((c == ',' && depth == 0) || c == '}') break;
  }
  while (end > begin && header[end - 1] == ' ') --end;
  return header.substr(begin, end - begin);
}

Result<std::vector<Entry>> npy_entries(const std::string& bytes, const std::string& path) {
  const std::string what = str_cat("token map ", path, " (a .npy file): ");
  if (bytes.size() < 10) return Status::errorf(what, "truncated: expected a header, found ", bytes.size(), " bytes");
  const auto major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3) return Status::errorf(what, "expected format version 1, 2 or 3, found ", int{major});
  const size_t length_bytes = major == 1 ? 2 : 4, header_begin = 8 + length_bytes;
  if (bytes.size() < header_begin) return Status::errorf(what, "truncated: expected a header, found ", bytes.size(), " bytes");
  uint64_t header_length = 0;
  for (size_t i = 0; i < length_bytes; ++i) header_length |= uint64_t{static_cast<uint8_t>(bytes[8 + i])} << (8 * i);
  if (bytes.size() < header_begin + header_length)
    return Status::errorf(what, "truncated: its header of ", header_length, " bytes ends past the file's ", bytes.size());
  const std::string header = bytes.substr(header_begin, header_length);
  const std::string descr = header_value(header, "descr"), shape = header_value(header, "shape");
  size_t item = 0;
  if (descr == "'<i4'") item = 4;
  else if (descr == "'<i8'") item = 8;
  else
    return Status::errorf(what, "expected dtype int32 or int64, little-endian ('<i4' or '<i8'), found ",
                          descr.empty() ? "no 'descr'" : shown(descr));
  // A 1-D shape is "(n,)"; anything else ("(n, 2)", "()") is refused.
  int64_t n = -1;
  if (shape.size() > 3 && shape.front() == '(' && shape.back() == ')' && shape[shape.size() - 2] == ',') {
    const std::string_view digits(shape.data() + 1, shape.size() - 3);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error == std::errc() && end == digits.data() + digits.size()) n = value;
  }
  if (n < 0) return Status::errorf(what, "expected a 1-D array, shape (n,), found shape ", shape.empty() ? "none" : shown(shape));
  const uint64_t data_begin = header_begin + header_length, expected = static_cast<uint64_t>(n) * item;
  const uint64_t found = bytes.size() - data_begin;
  if (found != expected)
    return Status::errorf(what, found < expected ? "truncated" : "trailing bytes", ": its header says ", n, " ",
                          item == 4 ? "int32" : "int64", " values (", expected, " bytes), found ", found, " bytes of data");
  std::vector<Entry> entries(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const char* p = bytes.data() + data_begin + static_cast<uint64_t>(i) * item;
    int64_t id = 0;
    if (item == 4) {
      int32_t v;
      std::memcpy(&v, p, 4);  // little-endian: the hosts we build for
      id = v;
    } else {
      std::memcpy(&id, p, 8);
    }
    entries[static_cast<size_t>(i)] = {id, str_cat("element ", i)};
  }
  return entries;
}

Result<std::vector<Entry>> text_entries(const std::string& bytes, const std::string& path) {
  // Fields per line, comments cut off.
  std::vector<std::vector<std::string_view>> lines;
  for (size_t begin = 0; begin < bytes.size();) {
    size_t end = bytes.find('\n', begin);
    if (end == std::string::npos) end = bytes.size();
    std::string_view line(bytes.data() + begin, end - begin);
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> fields;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      size_t j = i;
      while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
      if (j > i) fields.push_back(line.substr(i, j - i));
      i = j;
    }
    lines.push_back(std::move(fields));
    begin = end + 1;
  }
  bool pairs = false;  // every non-empty line "id count": the ids are the first column
  for (const auto& fields : lines) {
    if (fields.empty()) continue;
    pairs = fields.size() == 2;
    if (!pairs) break;
  }
  std::vector<Entry> entries;
  for (size_t l = 0; l < lines.size(); ++l) {
    const auto& fields = lines[l];
    for (size_t f = 0; f < (pairs ? std::min<size_t>(1, fields.size()) : fields.size()); ++f) {
      const std::string_view field = fields[f];
      int64_t id = 0;
      const char* begin = field.data();
      const auto [end, error] = std::from_chars(begin, begin + field.size(), id);
      if (error != std::errc() || end != begin + field.size())
        return Status::errorf("token map ", path, ": expected an integer token id, found \"", shown(field), "\" (line ",
                              l + 1, ")");
      entries.push_back({id, str_cat("line ", l + 1)});
    }
  }
  return entries;
}

}  // namespace

Result<std::vector<int32_t>> parse_token_map(const std::string& bytes, const std::string& path, int64_t vocab) {
  const bool npy = bytes.compare(0, 6, kNpyMagic) == 0;
  DS_ASSIGN_OR_RETURN(const std::vector<Entry> entries, npy ? npy_entries(bytes, path) : text_entries(bytes, path));
  return checked(entries, path, vocab);
}

Result<std::vector<int32_t>> read_token_map(const std::string& path, int64_t vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::errorf("token map ", path, ": cannot open it (", std::strerror(errno), ")");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return Status::errorf("token map ", path, ": cannot read it");
  return parse_token_map(bytes.str(), path, vocab);
}

Status write_token_map(const std::string& path, std::span<const int32_t> ids, std::span<const uint64_t> counts,
                       const std::string& comment) {
  if (ids.size() != counts.size()) return Status::errorf("token map ", path, ": ", ids.size(), " ids but ", counts.size(), " counts");
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) return Status::errorf("cannot write ", partial, ": ", std::strerror(errno));
    std::istringstream lines(comment);
    for (std::string line; std::getline(lines, line);) out << "# " << line << '\n';
    for (size_t i = 0; i < ids.size(); ++i) out << ids[i] << ' ' << counts[i] << '\n';
    out.flush();
    if (!out) {
      std::remove(partial.c_str());
      return Status::errorf("cannot write ", partial, ": ", std::strerror(errno));
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(partial.c_str());
    return Status::errorf("cannot rename ", partial, " to ", path, ": ", reason);
  }
  return {};
}

}  // namespace ds
