// SafetensorsCheckpoint: every tensor of a checkpoint directory, from `model.safetensors` or the
// shards named by `model.safetensors.index.json`, mmapped. Tracks which tensors were taken so
// that binding can report leftovers instead of silently ignoring them.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "io/safetensors_header.h"
#include "io/tensor_view.h"
#include "util/mapped_file.h"
#include "util/status.h"

namespace ds {

struct SafetensorsShard {
  MappedFile file;
  SafetensorsHeader header;
};

class SafetensorsCheckpoint {
 public:
  // Opens DIR/model.safetensors.index.json (sharded) or else DIR/model.safetensors.
  static Result<SafetensorsCheckpoint> open_dir(const std::string& dir);
  // Opens one safetensors file.
  static Result<SafetensorsCheckpoint> open_file(const std::string& path);

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

 private:
  Status add_shard(const std::string& path, const std::string& label);

  std::vector<std::unique_ptr<SafetensorsShard>> shards_;  // stable addresses for the views
  std::vector<std::string> file_names_;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> tensor_file_;  // name -> file it came from
  std::set<std::string> taken_;
};

}  // namespace ds
