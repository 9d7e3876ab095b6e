// resident_memory_bytes: VmRSS is in kB.
#include "util/process_memory.h"

#include <fstream>
#include <string>

namespace ds {

uint64_t resident_memory_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

}  // namespace ds
