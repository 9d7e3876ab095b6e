// Resident memory of this process from /proc/self/status: now (VmRSS, for bench and /metrics) and
// the kernel's high-water mark (VmHWM, for bench's peak: it sees the loading peak that samples miss).
#pragma once

#include <cstdint>

namespace ds {

uint64_t resident_memory_bytes();       // VmRSS; 0 where /proc is not readable
uint64_t peak_resident_memory_bytes();  // VmHWM since start or the last reset; 0 where /proc is not readable
// Restarts the high-water mark at the current resident size (writes 5 to /proc/self/clear_refs,
// Linux >= 4.0); false where the kernel does not allow it.
bool reset_peak_resident_memory();

}  // namespace ds
