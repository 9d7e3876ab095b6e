// resident_memory_bytes / peak_resident_memory_bytes: the kB figures of /proc/self/status.
#include "util/process_memory.h"

#include <cstdio>
#include <fstream>
#include <string>

namespace ds {
namespace {

uint64_t status_kilobytes_field(const std::string& field) {  // field: "VmRSS:"
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(field.size())) * 1024;
  return 0;
}

}  // namespace

uint64_t resident_memory_bytes() { return status_kilobytes_field("VmRSS:"); }

uint64_t peak_resident_memory_bytes() { return status_kilobytes_field("VmHWM:"); }

bool reset_peak_resident_memory() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

uint64_t huge_page_bytes(const void* begin, uint64_t bytes) {
  const auto first = reinterpret_cast<uintptr_t>(begin), last = first + bytes;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool overlaps = false;  // whether the mapping whose fields follow overlaps the range
  uint64_t total = 0;
  const std::string field = "AnonHugePages:";
  while (std::getline(smaps, line)) {
    unsigned long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &start, &end) == 2 && line.find(':') > line.find(' ')) {
      overlaps = start < last && first < end;  // a mapping's header: "start-end perms offset dev inode path"
    } else if (overlaps && line.rfind(field, 0) == 0) {
      total += std::stoull(line.substr(field.size())) * 1024;
    }
  }
  return total;
}

}  // namespace ds
