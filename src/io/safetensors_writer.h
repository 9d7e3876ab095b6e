// SafetensorsWriter: creates a safetensors file of declared tensors at its final size, mmapped,
// so callers fill tensor bytes in place (in parallel) without an intermediate copy.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "io/dtype.h"
#include "util/mapped_file.h"
#include "util/status.h"

namespace ds {

struct TensorDecl {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t nbytes() const;
};

// The header bytes (length prefix + JSON padded with spaces to a multiple of 8) for tensors laid
// out contiguously in the given order.
std::string safetensors_header_bytes(const std::vector<TensorDecl>& tensors,
                                     const std::map<std::string, std::string>& metadata);

class SafetensorsWriter {
 public:
  static Result<SafetensorsWriter> create(const std::string& path, std::vector<TensorDecl> tensors,
                                          const std::map<std::string, std::string>& metadata);
  size_t size() const { return tensors_.size(); }
  const TensorDecl& decl(size_t index) const { return tensors_[index]; }
  std::span<std::byte> data(size_t index);  // bytes of tensor `index`, to fill
  uint64_t data_bytes() const { return data_bytes_; }
  Status close();

 private:
  WritableMappedFile file_;
  std::vector<TensorDecl> tensors_;
  std::vector<uint64_t> offsets_;  // absolute file offset of each tensor
  uint64_t data_bytes_ = 0;
};

}  // namespace ds
