// AnonymousArray<T>: a large array in an anonymous mapping of its own. Its pages cost nothing until
// written (the kernel zero-fills each on first touch) and go back to the kernel when the array goes.
// glibc maps large heap blocks this way too; owning the mapping makes it so whatever the allocator.
// Under AddressSanitizer a heap block is not: its allocator clears the block's shadow when it maps
// and unmaps it (6 GiB: 1.2 s against 0.01 s for a mapping, measured), which the caches sized by
// --cache-memory and --prefix-cache-memory paid at every engine start of the sanitizer tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace ds {

namespace detail {
std::byte* map_anonymous(uint64_t bytes);  // null for 0 bytes; throws std::bad_alloc when refused
void unmap_anonymous(std::byte* data, uint64_t bytes);
}  // namespace detail

template <typename T>
class AnonymousArray {
  static_assert(std::is_trivial_v<T>, "an anonymous mapping holds zero bytes, not constructed objects");

 public:
  AnonymousArray() = default;
  explicit AnonymousArray(uint64_t count)
      : bytes_(count * sizeof(T)), data_(reinterpret_cast<T*>(detail::map_anonymous(bytes_))) {}
  ~AnonymousArray() { detail::unmap_anonymous(reinterpret_cast<std::byte*>(data_), bytes_); }
  AnonymousArray(AnonymousArray&& other) noexcept
      : bytes_(std::exchange(other.bytes_, 0)), data_(std::exchange(other.data_, nullptr)) {}
  AnonymousArray& operator=(AnonymousArray&& other) noexcept {
    std::swap(bytes_, other.bytes_);
    std::swap(data_, other.data_);
    return *this;
  }

  T* get() const { return data_; }

 private:
  uint64_t bytes_ = 0;
  T* data_ = nullptr;
};

}  // namespace ds
