// WeightArena: memory the model owns for matmul weights repacked at load time (bf16 panels, int8
// panels): one allocation in 2 MiB pages where the kernel grants them. A decode step streams every
// weight byte, and with 4 KiB pages the TLB misses and page-bounded hardware prefetch cost ~15–25%
// of the read rate (measured on the 2B layer shapes). Also: the release of the mmapped source pages
// a repacked weight no longer reads, so the resident set holds one copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "io/tensor_view.h"

namespace ds {

class WeightArena {
 public:
  // `bytes` of memory (rounded up to 2 MiB), aligned to 2 MiB, not yet resident.
  explicit WeightArena(uint64_t bytes);
  std::byte* data() { return memory_.get(); }
  uint64_t bytes() const { return bytes_; }  // as asked (the weights' packed bytes)
  uint64_t huge_page_bytes() const;            // how much of it the kernel backs with 2 MiB pages

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> memory_;
  uint64_t bytes_;
};

// Drops the resident pages of a mapped checkpoint range (whole pages inside it only); the file stays
// mapped, so a later read (an embedding row of a tied head) faults its page back in from the page
// cache. Returns the bytes released. Views whose bytes a checkpoint owns in memory (TensorView::owned)
// are left alone: nothing would fault them back.
uint64_t release_source_pages(const TensorView& view);

// What repacking does with a weight's source as soon as its packed copy has replaced it, and what that
// gave back. By default its mapped pages are released; a loader whose checkpoint converted values
// into memory (TensorView::owned) frees those too once no view reads them, so that the resident set
// never holds a converted tensor beside its packed copy (a 27B GGUF's value-head-reordered
// projections are 2.4 GiB).
struct SourceRelease {
  std::function<uint64_t(const TensorView& source)> release = release_source_pages;  // bytes given back
  uint64_t released = 0;  // bytes given back so far
};

// Repacks `views` into one new arena, in order: packed_bytes(view) bytes each (multiples of 64, so
// every copy starts 64-byte aligned), pack(source, destination) fills them and returns the new view,
// which replaces *view; then `release` gives back the source. Progress over the source bytes goes
// to stderr under `label` (a 2B checkpoint takes 4–14 s).
std::unique_ptr<WeightArena> repack_into_arena(const std::string& label, std::span<TensorView* const> views,
                                               const std::function<uint64_t(const TensorView&)>& packed_bytes,
                                               const std::function<TensorView(const TensorView&, std::byte*)>& pack,
                                               SourceRelease& release);

}  // namespace ds
