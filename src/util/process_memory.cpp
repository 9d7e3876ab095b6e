// resident_memory_bytes / peak_resident_memory_bytes: the kB figures of /proc/self/status.
#include "util/process_memory.h"

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

}  // namespace ds
