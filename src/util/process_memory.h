// Resident memory of this process from /proc/self/status: now (VmRSS, for bench and /metrics) and
// the kernel's high-water mark (VmHWM, for bench's peak: it sees the loading peak that samples miss);
// how much of a range sits in 2 MiB pages (/proc/self/smaps, for the loader's log).
#pragma once

#include <cstdint>

namespace ds {

uint64_t resident_memory_bytes();       // VmRSS; 0 where /proc is not readable
uint64_t peak_resident_memory_bytes();  // VmHWM since start or the last reset; 0 where /proc is not readable
// Restarts the high-water mark at the current resident size (writes 5 to /proc/self/clear_refs,
// Linux >= 4.0); false where the kernel does not allow it.
bool reset_peak_resident_memory();

// Bytes of [begin, begin + bytes) backed by transparent huge pages (AnonHugePages of the mappings
// it overlaps, counted whole: ranges that are their own mapping, as large allocations are); 0 where
// /proc is not readable.
uint64_t huge_page_bytes(const void* begin, uint64_t bytes);

}  // namespace ds
