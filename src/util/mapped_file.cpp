// MappedFile / WritableMappedFile over POSIX mmap.
#include "util/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace ds {
namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

Result<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::errorf("cannot open ", path, ": ", errno_text());
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    return Status::errorf("cannot stat ", path, ": ", why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::errorf("expected a regular file, found something else at ", path);
  }
  MappedFile file;
  file.path_ = path;
  file.size_ = static_cast<size_t>(st.st_size);
  if (file.size_ > 0) {
    void* data = mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const std::string why = errno_text();
      ::close(fd);
      return Status::errorf("cannot mmap ", path, " (", file.size_, " bytes): ", why);
    }
    file.data_ = static_cast<const std::byte*>(data);
  }
  ::close(fd);  // the mapping keeps the file alive
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    this->~MappedFile();
    new (this) MappedFile(std::move(other));
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(const_cast<std::byte*>(data_), size_);
}

Result<WritableMappedFile> WritableMappedFile::create(const std::string& path, size_t size) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::errorf("cannot create ", path, ": ", errno_text());
  // posix_fallocate reserves the blocks now, so a full disk is an error here and not a SIGBUS
  // while the pages are written later.
  if (size > 0) {
    const int rc = posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (rc != 0) {
      ::close(fd);
      return Status::errorf("cannot reserve ", size, " bytes for ", path, ": ", std::strerror(rc));
    }
  }
  WritableMappedFile file;
  file.path_ = path;
  file.size_ = size;
  file.fd_ = fd;
  if (size > 0) {
    void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) {
      const std::string why = errno_text();
      ::close(fd);
      file.fd_ = -1;
      return Status::errorf("cannot mmap ", path, " for writing: ", why);
    }
    file.data_ = static_cast<std::byte*>(data);
  }
  return file;
}

WritableMappedFile::WritableMappedFile(WritableMappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      fd_(std::exchange(other.fd_, -1)) {}

WritableMappedFile& WritableMappedFile::operator=(WritableMappedFile&& other) noexcept {
  if (this != &other) {
    (void)close();
    new (this) WritableMappedFile(std::move(other));
  }
  return *this;
}

WritableMappedFile::~WritableMappedFile() { (void)close(); }

Status WritableMappedFile::close() {
  Status status;
  if (data_ != nullptr) {
    if (munmap(data_, size_) != 0) status = Status::errorf("cannot unmap ", path_, ": ", errno_text());
    data_ = nullptr;
  }
  if (fd_ >= 0) {
    if (::close(fd_) != 0 && status.ok()) status = Status::errorf("cannot close ", path_, ": ", errno_text());
    fd_ = -1;
  }
  return status;
}

}  // namespace ds
