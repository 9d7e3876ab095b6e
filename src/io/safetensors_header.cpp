// Safetensors header validation; the rules follow the format's reference implementation:
// length prefix, JSON object, known dtypes, byte counts matching shapes, contiguous data.
#include "io/safetensors_header.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace ds {
namespace {

using nlohmann::json;

std::string describe(const json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return std::string(value.type_name()) + " " + text;
}

Result<uint64_t> read_unsigned(const json& value, const std::string& what) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) return static_cast<uint64_t>(value.get<int64_t>());
  return Status::errorf(what, ": expected a non-negative integer, found ", describe(value));
}

Result<TensorEntry> parse_entry(const std::string& name, const json& value) {
  const std::string where = "tensor \"" + name + "\"";
  if (!value.is_object()) return Status::errorf(where, ": expected an object {dtype, shape, data_offsets}, found ", describe(value));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!value.contains(key)) return Status::errorf(where, ": missing \"", key, "\"");
  for (const auto& [key, _] : value.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      return Status::errorf(where, ": unexpected key \"", key, "\" (expected dtype, shape, data_offsets)");

  TensorEntry entry;
  entry.name = name;
  const json& dtype = value["dtype"];
  if (!dtype.is_string()) return Status::errorf(where, ": dtype: expected a string, found ", describe(dtype));
  const auto parsed = dtype_from_name(dtype.get<std::string>());
  if (!parsed) return Status::errorf(where, ": unknown dtype \"", dtype.get<std::string>(), "\"");
  entry.dtype = *parsed;

  const json& shape = value["shape"];
  if (!shape.is_array()) return Status::errorf(where, ": shape: expected an array of integers, found ", describe(shape));
  uint64_t bytes = dtype_size(entry.dtype);
  bool overflow = false;
  for (const json& dim : shape) {
    DS_ASSIGN_OR_RETURN(const uint64_t size, read_unsigned(dim, where + ": shape"));
    if (size > static_cast<uint64_t>(INT64_MAX)) return Status::errorf(where, ": shape dimension ", size, " is too large");
    entry.shape.push_back(static_cast<int64_t>(size));
    overflow = overflow || __builtin_mul_overflow(bytes, size, &bytes);
  }

  const json& offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    return Status::errorf(where, ": data_offsets: expected [begin, end], found ", describe(offsets));
  DS_ASSIGN_OR_RETURN(entry.begin, read_unsigned(offsets[0], where + ": data_offsets[0]"));
  DS_ASSIGN_OR_RETURN(entry.end, read_unsigned(offsets[1], where + ": data_offsets[1]"));
  if (entry.end < entry.begin)
    return Status::errorf(where, ": data_offsets end ", entry.end, " is before begin ", entry.begin);
  if (overflow || bytes != entry.end - entry.begin)
    return Status::errorf(where, ": dtype ", dtype_name(entry.dtype), " and shape ", shape.dump(), " need ",
                          overflow ? std::string("more than 2^64") : std::to_string(bytes), " bytes, but data_offsets [",
                          entry.begin, ", ", entry.end, "] hold ", entry.end - entry.begin);
  return entry;
}

}  // namespace

uint64_t TensorEntry::numel() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

Result<SafetensorsHeader> parse_safetensors_header(std::span<const std::byte> file, const std::string& file_name) {
  auto fail = [&](const std::string& message) { return Status::errorf(file_name, ": ", message); };
  if (file.size() < 8) return fail(str_cat("not a safetensors file: ", file.size(), " bytes, expected at least 8"));
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | std::to_integer<uint64_t>(file[i]);
  if (header_length > kMaxSafetensorsHeaderBytes)
    return fail(str_cat("header length ", header_length, " exceeds the limit of ", kMaxSafetensorsHeaderBytes, " bytes"));
  if (header_length > file.size() - 8)
    return fail(str_cat("header length ", header_length, " runs past the end of the file (", file.size() - 8,
                        " bytes after the length prefix; truncated file?)"));
  if (header_length == 0 || std::to_integer<char>(file[8]) != '{')
    return fail("header does not start with '{' (expected a JSON object)");

  const char* text = reinterpret_cast<const char*>(file.data() + 8);
  const json header = json::parse(text, text + header_length, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return fail("header is not valid JSON");
  if (!header.is_object()) return fail("header is not a JSON object");

  SafetensorsHeader result;
  result.data_offset = 8 + header_length;
  const uint64_t data_size = file.size() - result.data_offset;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) return fail(str_cat("__metadata__: expected an object of strings, found ", describe(value)));
      for (const auto& [meta_key, meta_value] : value.items()) {
        if (!meta_value.is_string())
          return fail(str_cat("__metadata__.", meta_key, ": expected a string, found ", describe(meta_value)));
        result.metadata[meta_key] = meta_value.get<std::string>();
      }
      continue;
    }
    auto entry = parse_entry(key, value);
    if (!entry.ok()) return entry.status().with_context(file_name);
    result.tensors.push_back(std::move(entry).value());
  }

  std::sort(result.tensors.begin(), result.tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected_begin = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& entry : result.tensors) {
    if (entry.begin < expected_begin)
      return fail(str_cat("tensor \"", entry.name, "\" [", entry.begin, ", ", entry.end, ") overlaps \"", previous->name,
                          "\" [", previous->begin, ", ", previous->end, ")"));
    if (entry.begin > expected_begin)
      return fail(str_cat("tensor \"", entry.name, "\" starts at byte ", entry.begin, " but the previous data ends at ",
                          expected_begin, " (gaps are not allowed)"));
    if (entry.end > data_size)
      return fail(str_cat("tensor \"", entry.name, "\" ends at byte ", entry.end, " of the data section, but it holds only ",
                          data_size, " bytes (truncated file?)"));
    expected_begin = entry.end;
    previous = &entry;
  }
  if (expected_begin != data_size)
    return fail(str_cat("the tensors cover ", expected_begin, " bytes of data, but the file holds ", data_size,
                        " (trailing bytes that no tensor claims)"));
  return result;
}

}  // namespace ds
