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
  const std::vector<std::string>& files() const { return file_names_; }
  uint64_t total_bytes() const;

 protected:
  std::map<std::string, TensorView> tensors_;
  std::vector<std::string> file_names_;

 private:
  std::set<std::string> taken_;
};

}  // namespace ds
