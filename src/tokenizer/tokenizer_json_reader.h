// tokenizer.json read in one pass. Its two large tables, model.vocab and model.merges (Qwen3.5's:
// 248K entries each, 11 MB), go straight into vectors; the rest (a few KB of settings) becomes a JSON
// tree for TokenizerSpec's checks. A whole-document tree held ~1M small allocations and a std::map
// per object, which was most of a server's start-up.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace ds {

struct TokenizerJson {
  // The document without model.vocab when that was an object, and without model.merges when that was
  // an array; other values stay here for the checks to name what they found.
  nlohmann::json rest;
  bool has_vocab = false;  // model.vocab was an object: its entries are in `vocab`
  bool has_merges = false;  // model.merges was an array: its entries are in `merges`
  std::vector<std::pair<std::string, int32_t>> vocab;  // in file order, ByteLevel characters
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
};

// Checks each vocabulary id (an integer in [0, 2^24)) and each merge ("LEFT RIGHT" with one space, or
// a pair of strings) as it reads them; `source` names the file in errors.
Result<TokenizerJson> read_tokenizer_json(std::string_view text, const std::string& source);

}  // namespace ds
