// A token map file (`--speculative-token-map`): token ids, most frequent first — the "hot tokens" the
// MTP head drafts among (FR-Spec; SGLang's --speculative-token-map, llama.cpp's d2t). Two forms,
// told apart by their first bytes, not by the file name:
//   .npy: a 1-D array of int32 or int64, little-endian, C order (NumPy format 1.0, 2.0 or 3.0) —
//         what numpy.save(torch.load(sglang_hot_token_map).numpy()) writes;
//   text: token ids separated by whitespace (one per line, or many on a line); `#` starts a comment to
//         the end of its line. A file whose every non-empty line holds exactly two fields is a list of
//         "id count" pairs: the count (any number) is ignored.
// Every id must lie in [0, vocab) and appear once; the list must not be empty.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "util/status.h"

namespace ds {

// The ids of the file at `path`, in file order; errors name the file, what was expected and what was
// found (the line or element of a bad id).
Result<std::vector<int32_t>> read_token_map(const std::string& path, int64_t vocab);

// The same from the file's bytes (`path` names it in messages).
Result<std::vector<int32_t>> parse_token_map(const std::string& bytes, const std::string& path, int64_t vocab);

// Writes the text form: `comment` as `#` lines (one per line of it), then "id count" a line, in the
// order given (counts[i] belongs to ids[i]). Written to PATH.partial, then renamed: a failed write
// leaves no map that looks complete.
Status write_token_map(const std::string& path, std::span<const int32_t> ids, std::span<const uint64_t> counts,
                       const std::string& comment);

}  // namespace ds
