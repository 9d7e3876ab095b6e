// Human-readable figures for logs and `inspect`: bytes (GiB/MiB), counts (1.23 B), durations.
#pragma once

#include <cstdint>
#include <string>

namespace ds {

std::string human_bytes(uint64_t bytes);   // "1.50 GiB"
std::string human_count(uint64_t count);   // "752.4 M"
std::string fixed_decimals(double value, int decimals);  // fixed_decimals(0.4123, 3): "0.412"

}  // namespace ds
