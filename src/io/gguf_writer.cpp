// GGUF writing: the byte layout of gguf_file.cpp, produced instead of parsed.
#include "io/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unordered_set>

namespace ds {
namespace {

static_assert(std::endian::native == std::endian::little, "GGUF is written as little-endian");

constexpr uint32_t kVersion = 3;


class Bytes {
 public:
  template <typename T>
  void put(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    out_.append(raw, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out_ += s;
  }
  void put_raw(std::span<const std::byte> bytes) { out_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size()); }
  void pad_to(uint64_t alignment) { out_.append(gguf_align_up(out_.size(), alignment) - out_.size(), '\0'); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

Status check_value(const std::string& key, const GgufValue& v) {
  const bool array = v.type == GgufType::array;
  if (array ? v.element_type == GgufType::array : v.element_type != v.type || v.count != 1)
    return Status::errorf("metadata ", key, ": a ", array ? "array" : "scalar", " of ", gguf_type_name(v.element_type),
                          " × ", v.count, " is not a GGUF value");
  if (v.element_type == GgufType::string) {
    if (v.strings.size() != v.count || !v.numbers.empty())
      return Status::errorf("metadata ", key, ": expected ", v.count, " strings, found ", v.strings.size());
  } else if (v.numbers.size() != v.count * gguf_element_size(v.element_type) || !v.strings.empty()) {
    return Status::errorf("metadata ", key, ": expected ", v.count * gguf_element_size(v.element_type), " bytes of ",
                          gguf_type_name(v.element_type), ", found ", v.numbers.size());
  }
  return {};
}

Status check_tensor(const GgufTensorDecl& t) {
  if (t.name.empty() || t.name.size() > kGgufMaxTensorName)
    return Status::errorf("tensor name \"", t.name, "\": expected 1–", kGgufMaxTensorName, " bytes, found ", t.name.size());
  if (t.shape.empty() || t.shape.size() > kGgufMaxDims)
    return Status::errorf("tensor ", t.name, ": expected 1–", kGgufMaxDims, " dimensions, found ", t.shape.size());
  for (int64_t n : t.shape)
    if (n < 0) return Status::errorf("tensor ", t.name, ": negative dimension ", n);
  if (t.shape[0] % t.type.block_size != 0)
    return Status::errorf("tensor ", t.name, ": its innermost dimension ", t.shape[0], " is not a multiple of ", t.type.name,
                          "'s block of ", t.type.block_size);
  return {};
}

}  // namespace

void GgufMetadata::set(const std::string& key, GgufValue value) {
  for (auto& [k, v] : entries_)
    if (k == key) {
      v = std::move(value);
      return;
    }
  entries_.emplace_back(key, std::move(value));
}

void GgufMetadata::set_string(const std::string& key, std::string value) {
  GgufValue v;
  v.type = v.element_type = GgufType::string;
  v.strings.push_back(std::move(value));
  set(key, std::move(v));
}

void GgufMetadata::set_strings(const std::string& key, std::vector<std::string> values) {
  GgufValue v;
  v.type = GgufType::array;
  v.element_type = GgufType::string;
  v.count = values.size();
  v.strings = std::move(values);
  set(key, std::move(v));
}

uint64_t GgufTensorDecl::bytes() const { return static_cast<uint64_t>(rows()) * row_bytes(); }

int64_t GgufTensorDecl::rows() const {
  int64_t rows = 1;
  for (size_t d = 1; d < shape.size(); ++d) rows *= shape[d];
  return rows;
}

Result<std::string> gguf_header_bytes(const GgufMetadata& metadata, const std::vector<GgufTensorDecl>& tensors,
                                      uint64_t alignment) {
  if (alignment == 0 || !std::has_single_bit(alignment) || alignment > UINT32_MAX)
    return Status::errorf("GGUF alignment: expected a power of two, found ", alignment);
  GgufMetadata all = metadata;
  if (alignment != kGgufDefaultAlignment) all.set_number<uint32_t>("general.alignment", static_cast<uint32_t>(alignment));

  Bytes out;
  out.put<uint32_t>(kGgufMagic);
  out.put<uint32_t>(kVersion);
  out.put<uint64_t>(tensors.size());
  out.put<uint64_t>(all.entries().size());
  for (const auto& [key, v] : all.entries()) {
    if (key.empty()) return Status::errorf("a metadata key is empty");
    DS_TRY(check_value(key, v));
    out.put_string(key);
    out.put<uint32_t>(static_cast<uint32_t>(v.type));
    if (v.type == GgufType::array) {
      out.put<uint32_t>(static_cast<uint32_t>(v.element_type));
      out.put<uint64_t>(v.count);
    }
    if (v.element_type == GgufType::string) {
      for (const std::string& s : v.strings) out.put_string(s);
    } else {
      out.put_raw(v.numbers);
    }
  }
  std::unordered_set<std::string_view> names;
  uint64_t offset = 0;
  for (const GgufTensorDecl& t : tensors) {
    DS_TRY(check_tensor(t));
    if (!names.insert(t.name).second) return Status::errorf("tensor ", t.name, " is declared twice");
    out.put_string(t.name);
    out.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (int64_t n : t.shape) out.put<uint64_t>(static_cast<uint64_t>(n));
    out.put<uint32_t>(t.type.id);
    out.put<uint64_t>(offset);
    offset = gguf_align_up(offset + t.bytes(), alignment);
  }
  out.pad_to(alignment);
  return out.take();
}

Result<GgufWriter> GgufWriter::create(const std::string& path, const GgufMetadata& metadata,
                                      std::vector<GgufTensorDecl> tensors, uint64_t alignment) {
  DS_ASSIGN_OR_RETURN(const std::string header, gguf_header_bytes(metadata, tensors, alignment));
  GgufWriter writer;
  writer.path_ = path;
  writer.partial_path_ = path + ".partial";
  uint64_t end = header.size();
  for (const GgufTensorDecl& t : tensors) {
    writer.offsets_.push_back(end);
    end = gguf_align_up(end + t.bytes(), alignment);
  }
  writer.file_bytes_ = end;  // the last tensor padded too, as gguf-py writes (ggml's reader sums padded sizes)
  writer.tensors_ = std::move(tensors);
  writer.written_ = std::make_unique<std::atomic<uint64_t>[]>(writer.tensors_.size());

  writer.fd_ = ::open(writer.partial_path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (writer.fd_ < 0) return Status::errorf("cannot create ", writer.partial_path_, ": ", std::strerror(errno));
  if (::ftruncate(writer.fd_, static_cast<off_t>(writer.file_bytes_)) != 0)
    return Status::errorf("cannot size ", writer.partial_path_, " to ", writer.file_bytes_, " bytes: ", std::strerror(errno));
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(header.data()), header.size());
  for (uint64_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pwrite(writer.fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) return Status::errorf("cannot write ", writer.partial_path_, ": ", std::strerror(errno));
    done += static_cast<uint64_t>(n);
  }
  return writer;
}

GgufWriter::GgufWriter(GgufWriter&& other) noexcept { *this = std::move(other); }

GgufWriter& GgufWriter::operator=(GgufWriter&& other) noexcept {
  if (this == &other) return *this;
  if (fd_ >= 0) ::close(fd_);
  path_ = std::move(other.path_);
  partial_path_ = std::move(other.partial_path_);
  fd_ = std::exchange(other.fd_, -1);
  tensors_ = std::move(other.tensors_);
  offsets_ = std::move(other.offsets_);
  written_ = std::move(other.written_);
  file_bytes_ = other.file_bytes_;
  return *this;
}

GgufWriter::~GgufWriter() {
  if (fd_ < 0) return;
  ::close(fd_);
  std::error_code ignored;
  std::filesystem::remove(partial_path_, ignored);
}

Status GgufWriter::write(size_t index, uint64_t offset, std::span<const std::byte> bytes) {
  if (fd_ < 0) return Status::internal("GgufWriter::write after close");
  if (index >= tensors_.size()) return Status::internal("tensor index ", index, " of ", tensors_.size());
  const uint64_t size = tensors_[index].bytes();
  if (offset > size || bytes.size() > size - offset)
    return Status::internal("tensor ", tensors_[index].name, ": bytes [", offset, ", ", offset + bytes.size(),
                            ") are outside its ", size, " bytes");
  for (uint64_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offsets_[index] + offset + done));
    if (n <= 0) return Status::errorf("cannot write ", partial_path_, ": ", n < 0 ? std::strerror(errno) : "no progress (disk full?)");
    done += static_cast<uint64_t>(n);
  }
  written_[index] += bytes.size();
  return {};
}

Status GgufWriter::close() {
  if (fd_ < 0) return Status::internal("GgufWriter closed twice");
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (written_[i] != tensors_[i].bytes())
      return Status::internal("tensor ", tensors_[i].name, ": ", written_[i].load(), " of its ", tensors_[i].bytes(),
                              " bytes were written");
  // fsync surfaces a full disk or an I/O error here rather than in a later reader.
  const bool synced = ::fsync(fd_) == 0;
  const int saved = errno;
  ::close(fd_);
  fd_ = -1;
  std::error_code error;
  if (!synced) {
    std::filesystem::remove(partial_path_, error);
    return Status::errorf("cannot write ", partial_path_, ": ", std::strerror(saved));
  }
  std::filesystem::rename(partial_path_, path_, error);
  if (error) return Status::errorf("cannot rename ", partial_path_, " to ", path_, ": ", error.message());
  return {};
}

}  // namespace ds
