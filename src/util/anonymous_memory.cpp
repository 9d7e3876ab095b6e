#include "util/anonymous_memory.h"

#include <sys/mman.h>

#include <new>

namespace ds::detail {

std::byte* map_anonymous(uint64_t bytes) {
  if (bytes == 0) return nullptr;
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) throw std::bad_alloc();  // as operator new would
  return static_cast<std::byte*>(data);
}

void unmap_anonymous(std::byte* data, uint64_t bytes) {
  if (data != nullptr) munmap(data, bytes);
}

}  // namespace ds::detail
