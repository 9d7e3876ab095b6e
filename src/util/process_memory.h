// Resident memory of this process (VmRSS from /proc/self/status), for bench and /metrics.
#pragma once

#include <cstdint>

namespace ds {

uint64_t resident_memory_bytes();  // 0 where /proc is not readable

}  // namespace ds
