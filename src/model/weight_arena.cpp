#include "model/weight_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "util/check.h"
#include "util/human.h"
#include "util/process_memory.h"
#include "util/progress.h"

namespace ds {

void WeightArena::Free::operator()(std::byte* p) const { std::free(p); }

WeightArena::WeightArena(uint64_t bytes) : bytes_(bytes) {
  constexpr uint64_t kHugePage = 2 << 20;
  const uint64_t reserved = std::max<uint64_t>(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
  memory_.reset(static_cast<std::byte*>(std::aligned_alloc(kHugePage, reserved)));
  DS_CHECK(memory_ != nullptr, "out of memory for ", human_bytes(bytes), " of repacked weights");
  madvise(memory_.get(), reserved, MADV_HUGEPAGE);  // advice only: 4 KiB pages still work
}

uint64_t WeightArena::huge_page_bytes() const { return ds::huge_page_bytes(memory_.get(), bytes_); }

uint64_t release_source_pages(const TensorView& view) {
  if (view.owned) return 0;  // not re-readable from a file (e.g. the tied embedding table still reads it)
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(view.data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(view.data) + view.nbytes) / page * page;
  if (end <= begin) return 0;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  return end - begin;
}

std::unique_ptr<WeightArena> repack_into_arena(const std::string& label, std::span<TensorView* const> views,
                                               const std::function<uint64_t(const TensorView&)>& packed_bytes,
                                               const std::function<TensorView(const TensorView&, std::byte*)>& pack,
                                               SourceRelease& release) {
  uint64_t total = 0, source_bytes = 0;
  for (const TensorView* view : views) {
    total += packed_bytes(*view);
    source_bytes += view->nbytes;
  }
  auto arena = std::make_unique<WeightArena>(total);
  Progress progress(label, source_bytes, true);
  uint64_t offset = 0;
  for (TensorView* view : views) {
    const TensorView source = *view;
    const uint64_t bytes = packed_bytes(source);
    *view = pack(source, arena->data() + offset);
    offset += bytes;
    release.released += release.release(source);
    progress.advance(source.nbytes);
  }
  return arena;
}

}  // namespace ds
