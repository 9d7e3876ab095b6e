// GGUF parsing: a bounds-checked little-endian reader over the file's bytes; every count is checked
// against the bytes left before anything is reserved, so a hostile file cannot ask for memory.
#include "io/gguf_file.h"

#include <bit>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace ds {
namespace {

bool is_integer(GgufType t) {
  return t == GgufType::uint8 || t == GgufType::int8 || t == GgufType::uint16 || t == GgufType::int16 ||
         t == GgufType::uint32 || t == GgufType::int32 || t == GgufType::uint64 || t == GgufType::int64;
}

static_assert(std::endian::native == std::endian::little, "GGUF is read in place as little-endian");

template <typename T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// Element i of a numeric array as a double (integers exactly up to 2^53), or as an integer.
double number_at(GgufType t, const std::byte* p) {
  switch (t) {
    case GgufType::uint8: return static_cast<double>(load<uint8_t>(p));
    case GgufType::int8: return static_cast<double>(load<int8_t>(p));
    case GgufType::boolean: return static_cast<double>(load<uint8_t>(p) != 0);
    case GgufType::uint16: return static_cast<double>(load<uint16_t>(p));
    case GgufType::int16: return static_cast<double>(load<int16_t>(p));
    case GgufType::uint32: return static_cast<double>(load<uint32_t>(p));
    case GgufType::int32: return static_cast<double>(load<int32_t>(p));
    case GgufType::float32: return static_cast<double>(std::bit_cast<float>(load<uint32_t>(p)));
    case GgufType::uint64: return static_cast<double>(load<uint64_t>(p));
    case GgufType::int64: return static_cast<double>(load<int64_t>(p));
    case GgufType::float64: return std::bit_cast<double>(load<uint64_t>(p));
    case GgufType::string: case GgufType::array: break;
  }
  return 0.0;
}

Result<int64_t> integer_at(std::string_view key, GgufType t, const std::byte* p) {
  switch (t) {
    case GgufType::uint8: return static_cast<int64_t>(load<uint8_t>(p));
    case GgufType::int8: return static_cast<int64_t>(load<int8_t>(p));
    case GgufType::uint16: return static_cast<int64_t>(load<uint16_t>(p));
    case GgufType::int16: return static_cast<int64_t>(load<int16_t>(p));
    case GgufType::uint32: return static_cast<int64_t>(load<uint32_t>(p));
    case GgufType::int32: return static_cast<int64_t>(load<int32_t>(p));
    case GgufType::int64: return load<int64_t>(p);
    case GgufType::uint64: {
      const uint64_t v = load<uint64_t>(p);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Status::errorf("metadata ", key, ": ", v, " is out of range");
      return static_cast<int64_t>(v);
    }
    default: break;
  }
  return Status::errorf("metadata ", key, ": expected an integer, found ", gguf_type_name(t));
}

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::string& file) : bytes_(bytes), file_(file) {}

  uint64_t position() const { return pos_; }
  uint64_t left() const { return bytes_.size() - pos_; }

  template <typename... Args>
  Status error(const Args&... args) const {
    return Status::errorf(file_, ": ", args..., " (at byte ", pos_, " of ", bytes_.size(), ")");
  }
  template <typename T>
  Result<T> read(const char* what) {
    if (left() < sizeof(T)) return error("the file ends inside ", what);
    const T value = load<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return value;
  }
  Result<std::span<const std::byte>> take(uint64_t n, const char* what) {
    if (left() < n) return error(what, " of ", n, " bytes runs past the end of the file");
    const auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  Result<std::string_view> string(const char* what) {
    DS_ASSIGN_OR_RETURN(const uint64_t length, read<uint64_t>(what));
    DS_ASSIGN_OR_RETURN(const auto chars, take(length, what));
    return std::string_view(reinterpret_cast<const char*>(chars.data()), chars.size());
  }

 private:
  std::span<const std::byte> bytes_;
  const std::string& file_;
  uint64_t pos_ = 0;
};

Result<GgufType> value_type(Reader& r, const char* what) {
  DS_ASSIGN_OR_RETURN(const uint32_t raw, r.read<uint32_t>(what));
  if (raw > static_cast<uint32_t>(GgufType::float64))
    return r.error(what, ": unknown metadata value type ", raw, " (expected 0–12)");
  return static_cast<GgufType>(raw);
}

Status read_entry(Reader& r, GgufEntry& entry) {
  DS_ASSIGN_OR_RETURN(entry.key, r.string("a metadata key"));
  if (entry.key.empty()) return r.error("a metadata key is empty");
  DS_ASSIGN_OR_RETURN(entry.type, value_type(r, "a metadata value type"));
  entry.element_type = entry.type;
  entry.count = 1;
  if (entry.type == GgufType::array) {
    DS_ASSIGN_OR_RETURN(entry.element_type, value_type(r, "an array's element type"));
    if (entry.element_type == GgufType::array)
      return r.error("metadata ", entry.key, ": arrays of arrays are not supported");
    DS_ASSIGN_OR_RETURN(entry.count, r.read<uint64_t>("an array's length"));
  }
  if (entry.element_type == GgufType::string) {
    // Each string takes at least its 8-byte length: bound the count before reserving.
    if (entry.count > r.left() / 8)
      return r.error("metadata ", entry.key, ": ", entry.count, " strings cannot fit in the ", r.left(), " bytes left");
    entry.strings.reserve(static_cast<size_t>(entry.count));
    for (uint64_t i = 0; i < entry.count; ++i) {
      DS_ASSIGN_OR_RETURN(const auto s, r.string("a metadata string"));
      entry.strings.push_back(s);
    }
    return {};
  }
  const uint64_t size = gguf_element_size(entry.element_type);
  if (entry.count > r.left() / size)
    return r.error("metadata ", entry.key, ": ", entry.count, " values of ", size, " bytes cannot fit in the ",
                   r.left(), " bytes left");
  DS_ASSIGN_OR_RETURN(entry.numbers, r.take(entry.count * size, "a metadata value"));
  return {};
}

Status read_tensor(Reader& r, GgufTensor& t) {
  DS_ASSIGN_OR_RETURN(t.name, r.string("a tensor name"));
  if (t.name.empty() || t.name.size() > kGgufMaxTensorName)
    return r.error("tensor name \"", t.name.substr(0, 80), "\": expected 1–", kGgufMaxTensorName, " bytes, found ", t.name.size());
  DS_ASSIGN_OR_RETURN(const uint32_t dims, r.read<uint32_t>("a tensor's dimension count"));
  if (dims < 1 || dims > kGgufMaxDims)
    return r.error("tensor ", t.name, ": expected 1–", kGgufMaxDims, " dimensions, found ", dims);
  t.numel = 1;
  for (uint32_t d = 0; d < dims; ++d) {
    DS_ASSIGN_OR_RETURN(const uint64_t n, r.read<uint64_t>("a tensor dimension"));
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (n > 0 && static_cast<uint64_t>(t.numel) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n))
      return r.error("tensor ", t.name, ": dimension ", d, " of ", n, " overflows the element count");
    t.shape.push_back(static_cast<int64_t>(n));
    t.numel *= static_cast<int64_t>(n);
  }
  DS_ASSIGN_OR_RETURN(const uint32_t type, r.read<uint32_t>("a tensor type"));
  const auto info = ggml_type_info(type);
  if (!info) return r.error("tensor ", t.name, ": unknown ggml type ", type);
  t.type = *info;
  if (t.shape[0] % t.type.block_size != 0)
    return r.error("tensor ", t.name, ": its innermost dimension ", t.shape[0], " is not a multiple of ", t.type.name,
                   "'s block of ", t.type.block_size);
  t.bytes = static_cast<uint64_t>(t.numel / t.type.block_size) * static_cast<uint64_t>(t.type.type_size);
  if (t.numel / t.type.block_size > 0 &&
      t.bytes / static_cast<uint64_t>(t.type.type_size) != static_cast<uint64_t>(t.numel / t.type.block_size))
    return r.error("tensor ", t.name, ": its byte size overflows");
  DS_ASSIGN_OR_RETURN(t.offset, r.read<uint64_t>("a tensor offset"));
  return {};
}


}  // namespace

uint64_t gguf_element_size(GgufType type) {
  switch (type) {
    case GgufType::uint8: case GgufType::int8: case GgufType::boolean: return 1;
    case GgufType::uint16: case GgufType::int16: return 2;
    case GgufType::uint32: case GgufType::int32: case GgufType::float32: return 4;
    case GgufType::uint64: case GgufType::int64: case GgufType::float64: return 8;
    case GgufType::string: case GgufType::array: return 0;
  }
  return 0;
}

const char* gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::uint8: return "uint8";
    case GgufType::int8: return "int8";
    case GgufType::uint16: return "uint16";
    case GgufType::int16: return "int16";
    case GgufType::uint32: return "uint32";
    case GgufType::int32: return "int32";
    case GgufType::float32: return "float32";
    case GgufType::boolean: return "bool";
    case GgufType::string: return "string";
    case GgufType::array: return "array";
    case GgufType::uint64: return "uint64";
    case GgufType::int64: return "int64";
    case GgufType::float64: return "float64";
  }
  return "unknown";
}

Result<int64_t> GgufEntry::integer() const {
  if (type == GgufType::array) return Status::errorf("metadata ", key, ": expected an integer, found an array");
  return integer_at(key, type, numbers.data());
}

Result<double> GgufEntry::number() const {
  if (type == GgufType::array || type == GgufType::string || type == GgufType::boolean)
    return Status::errorf("metadata ", key, ": expected a number, found ", gguf_type_name(type));
  return number_at(type, numbers.data());
}

Result<bool> GgufEntry::boolean() const {
  if (type != GgufType::boolean) return Status::errorf("metadata ", key, ": expected a bool, found ", gguf_type_name(type));
  return load<uint8_t>(numbers.data()) != 0;
}

Result<std::string_view> GgufEntry::string() const {
  if (type != GgufType::string) return Status::errorf("metadata ", key, ": expected a string, found ", gguf_type_name(type));
  return strings[0];
}

Result<std::vector<int64_t>> GgufEntry::integers() const {
  if (type != GgufType::array || !is_integer(element_type))
    return Status::errorf("metadata ", key, ": expected an array of integers, found ",
                          type == GgufType::array ? "an array of " : "", gguf_type_name(element_type));
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  const uint64_t size = gguf_element_size(element_type);
  for (uint64_t i = 0; i < count; ++i) {
    DS_ASSIGN_OR_RETURN(const int64_t v, integer_at(key, element_type, numbers.data() + i * size));
    out.push_back(v);
  }
  return out;
}

Result<std::vector<double>> GgufEntry::numbers_list() const {
  if (type != GgufType::array || element_type == GgufType::string || element_type == GgufType::boolean)
    return Status::errorf("metadata ", key, ": expected an array of numbers, found ",
                          type == GgufType::array ? "an array of " : "", gguf_type_name(element_type));
  std::vector<double> out;
  out.reserve(static_cast<size_t>(count));
  const uint64_t size = gguf_element_size(element_type);
  for (uint64_t i = 0; i < count; ++i) out.push_back(number_at(element_type, numbers.data() + i * size));
  return out;
}

Result<std::span<const std::string_view>> GgufEntry::string_list() const {
  if (type != GgufType::array || element_type != GgufType::string)
    return Status::errorf("metadata ", key, ": expected an array of strings, found ",
                          type == GgufType::array ? "an array of " : "", gguf_type_name(element_type));
  return std::span<const std::string_view>(strings);
}

const GgufEntry* GgufFile::find(std::string_view key) const {
  for (const GgufEntry& e : metadata)
    if (e.key == key) return &e;
  return nullptr;
}

const GgufTensor* GgufFile::tensor(std::string_view name) const {
  for (const GgufTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

Result<const GgufEntry*> GgufFile::require(std::string_view key) const {
  if (const GgufEntry* e = find(key)) return e;
  return Status::errorf("metadata ", key, " is missing");
}

Result<GgufFile> parse_gguf(std::span<const std::byte> file, const std::string& file_name) {
  Reader r(file, file_name);
  GgufFile out;
  DS_ASSIGN_OR_RETURN(const uint32_t magic, r.read<uint32_t>("the GGUF magic"));
  if (magic != kGgufMagic) return r.error("not a GGUF file (expected the magic \"GGUF\" at its start)");
  DS_ASSIGN_OR_RETURN(out.version, r.read<uint32_t>("the GGUF version"));
  if (out.version == 1) return r.error("GGUF version 1 (2023) is not supported; convert the model again with a current llama.cpp");
  if (out.version >= 0x10000 && (out.version & 0xFFFF) == 0)
    return r.error("GGUF version ", __builtin_bswap32(out.version), " in big-endian byte order is not supported");
  if (out.version != 2 && out.version != 3) return r.error("GGUF version ", out.version, " is not supported (expected 2 or 3)");
  DS_ASSIGN_OR_RETURN(const uint64_t tensor_count, r.read<uint64_t>("the tensor count"));
  DS_ASSIGN_OR_RETURN(const uint64_t kv_count, r.read<uint64_t>("the metadata count"));
  // A metadata pair takes at least 8 + 1 + 4 + 1 bytes, a tensor info 8 + 1 + 4 + 8 + 4 + 8.
  if (kv_count > r.left() / 14) return r.error(kv_count, " metadata pairs cannot fit in the file");
  if (tensor_count > r.left() / 33) return r.error(tensor_count, " tensor infos cannot fit in the file");

  out.metadata.resize(static_cast<size_t>(kv_count));
  std::unordered_set<std::string_view> keys;
  for (GgufEntry& entry : out.metadata) {
    DS_TRY(read_entry(r, entry));
    if (!keys.insert(entry.key).second) return r.error("metadata key ", entry.key, " appears twice");
  }
  if (const GgufEntry* alignment = out.find("general.alignment")) {
    if (alignment->type != GgufType::uint32)
      return r.error("general.alignment: expected a uint32, found ", gguf_type_name(alignment->type));
    out.alignment = static_cast<uint64_t>(*alignment->integer());
    if (out.alignment == 0 || !std::has_single_bit(out.alignment))
      return r.error("general.alignment: expected a power of two, found ", out.alignment);
  }

  out.tensors.resize(static_cast<size_t>(tensor_count));
  std::unordered_set<std::string_view> names;
  for (GgufTensor& t : out.tensors) {
    DS_TRY(read_tensor(r, t));
    if (!names.insert(t.name).second) return r.error("tensor ", t.name, " appears twice");
  }

  out.data_offset = gguf_align_up(r.position(), out.alignment);
  if (!out.tensors.empty() && out.data_offset > file.size())
    return Status::errorf(file_name, ": the data section starts at byte ", out.data_offset, ", past the end of the file (",
                          file.size(), " bytes; a truncated download?)");
  const uint64_t data_bytes = out.data_offset <= file.size() ? file.size() - out.data_offset : 0;
  uint64_t expected = 0;  // where the next tensor must start: tensors are back to back, each padded
  for (const GgufTensor& t : out.tensors) {
    if (t.offset != expected)
      return Status::errorf(file_name, ": tensor ", t.name, " starts at data offset ", t.offset, ", expected ", expected,
                            " (where the previous tensor ends, aligned to ", out.alignment, ")");
    if (t.bytes > data_bytes || t.offset > data_bytes - t.bytes)
      return Status::errorf(file_name, ": tensor ", t.name, " (", t.bytes, " bytes at data offset ", t.offset,
                            ") runs past the end of the file: the data section holds ", data_bytes,
                            " bytes (a truncated download?)");
    expected = gguf_align_up(t.offset + t.bytes, out.alignment);
  }
  return out;
}

}  // namespace ds
