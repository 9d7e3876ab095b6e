// MappedFile: a read-only memory map of a whole file (checkpoints are never copied into RAM),
// and WritableMappedFile: a file created at a fixed size and filled in place (checkpoint writer).
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "util/status.h"

namespace ds {

class MappedFile {
 public:
  static Result<MappedFile> open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

class WritableMappedFile {
 public:
  // Creates (or truncates) `path` and maps `size` bytes of it for writing.
  static Result<WritableMappedFile> create(const std::string& path, size_t size);

  WritableMappedFile() = default;
  WritableMappedFile(WritableMappedFile&& other) noexcept;
  WritableMappedFile& operator=(WritableMappedFile&& other) noexcept;
  WritableMappedFile(const WritableMappedFile&) = delete;
  WritableMappedFile& operator=(const WritableMappedFile&) = delete;
  ~WritableMappedFile();

  std::span<std::byte> bytes() { return {data_, size_}; }
  // Unmaps and closes; reports write-back errors (a full disk surfaces here, not as a crash).
  Status close();

 private:
  std::string path_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
};

}  // namespace ds
