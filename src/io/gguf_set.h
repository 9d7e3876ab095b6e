// GgufSet: one GGUF model as its files — a single FILE.gguf, or every part of a split set
// (NAME-00001-of-0000N.gguf …, as llama.cpp's converter and gguf-split write them), each mapped and
// parsed (gguf_file.h). A split set is checked whole before anything is trusted: every part present,
// each naming itself part i of the same N (split.no, split.count), one architecture, the tensor count
// part 1 promises (split.tensors.count), no tensor in two parts. The model's metadata is part 1's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/gguf_file.h"
#include "util/mapped_file.h"
#include "util/status.h"

namespace ds {

struct GgufPart {
  std::string name;  // file name, for messages
  MappedFile file;
  GgufFile gguf;     // its views point into `file`
  const std::byte* data(const GgufTensor& t) const { return file.bytes().data() + gguf.data_offset + t.offset; }
};

struct GgufSetTensor {
  const GgufTensor* info;
  const GgufPart* part;
  const std::byte* data() const { return part->data(*info); }
};

// A split-set part's file name, STEM-0000i-of-0000N.gguf (five digits each, as llama.cpp writes).
struct SplitName {
  std::string stem;
  int64_t index = 0, count = 0;  // 1-based part, parts
};
std::optional<SplitName> parse_split_name(std::string_view file_name);

class GgufSet {
 public:
  // `path` is a .gguf file or any part of a split set (its siblings are found by name).
  static Result<GgufSet> open(const std::string& path);

  const GgufFile& metadata() const { return parts_.front()->gguf; }
  const std::vector<std::unique_ptr<GgufPart>>& parts() const { return parts_; }
  const std::vector<GgufSetTensor>& tensors() const { return tensors_; }  // part by part, in file order
  const GgufSetTensor* tensor(std::string_view name) const;
  uint64_t file_bytes() const;

 private:
  std::vector<std::unique_ptr<GgufPart>> parts_;  // stable addresses for the tensors' views
  std::vector<GgufSetTensor> tensors_;
};

}  // namespace ds
