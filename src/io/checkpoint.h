// Checkpoint: the tensors of a model file set under their HF names, as views into memory the
// checkpoint owns (mapped files, or values it converted). Binding (model/qwen35_weights.h) and the
// summaries read any checkpoint through this; SafetensorsCheckpoint and GgufCheckpoint (model/) make
// one. Tracks which tensors were taken so that binding can report leftovers instead of silently
// ignoring them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/tensor_view.h"
#include "util/status.h"

namespace ds {

class Checkpoint {
 public:
  virtual ~Checkpoint() = default;
  Checkpoint() = default;
  Checkpoint(Checkpoint&&) = default;
  Checkpoint& operator=(Checkpoint&&) = default;

  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // Looks a tensor up (does not mark it taken).
  const TensorView* find(const std::string& name) const;
  // Marks a tensor as used by the model and returns it.
  Result<TensorView> take(const std::string& name);
  void mark_taken(const std::string& name) { taken_.insert(name); }
  // Tensor names not taken so far, sorted.
  std::vector<std::string> untaken() const;

  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  // Frees the values this checkpoint converted into memory at load (not file mappings) that no view
  // of `in_use` points at any more — repacked copies replaced them — and leaves their views here
  // without data. Returns the bytes freed.
  virtual uint64_t release_converted(const std::set<const std::byte*>& in_use) {
    (void)in_use;
    return 0;
  }
  // For a tensor whose columns stay in the file's order because HF's would split its quantisation
  // blocks (a GGUF out_proj whose value heads llama.cpp reordered, in a block type wider than a
  // head: docs/gguf.md): the HF value head each run of head-size columns holds, in stored order.
  // Empty for every other tensor.
  const std::vector<int32_t>& column_heads(const std::string& name) const;
  const std::vector<std::string>& files() const { return file_names_; }
  uint64_t total_bytes() const;

 protected:
  std::map<std::string, TensorView> tensors_;
  std::vector<std::string> file_names_;
  std::map<std::string, std::vector<int32_t>> column_heads_;

 private:
  std::set<std::string> taken_;
};

}  // namespace ds
