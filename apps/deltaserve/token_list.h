// Parsing comma-separated integer lists from the command line ("1,2,3"), strictly: every item
// must be a non-negative integer, and an error names the item and its position.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace ds::app {

Result<std::vector<int32_t>> parse_int_list(const std::string& text, const std::string& option);
std::string join_ints(const std::vector<int32_t>& values);

}  // namespace ds::app
