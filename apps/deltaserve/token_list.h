// Parsing comma-separated integer lists from the command line ("1,2,3"), strictly: every item
// must be a non-negative integer, and an error names the item and its position. Token ids are also
// checked against the checkpoint's vocabulary before the weights load.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/status.h"

namespace ds::app {

Result<std::vector<int32_t>> parse_int_list(const std::string& text, const std::string& option);
std::string join_ints(const std::vector<int32_t>& values);
// The first id outside the vocabulary of model_dir/config.json as an error naming the option, the
// item (from 1), the id and the vocabulary size. Reads only config.json, so a bad id fails before a
// load of seconds to minutes.
Status check_token_ids(std::span<const int32_t> ids, const std::string& model_dir, const std::string& option);

}  // namespace ds::app
