// SafetensorsCheckpoint: every tensor of a checkpoint directory, from `model.safetensors` or the
// shards named by `model.safetensors.index.json`, mmapped.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "io/safetensors_header.h"
#include "util/mapped_file.h"
#include "util/status.h"

namespace ds {

struct SafetensorsShard {
  MappedFile file;
  SafetensorsHeader header;
};

class SafetensorsCheckpoint final : public Checkpoint {
 public:
  // Opens DIR/model.safetensors.index.json (sharded) or else DIR/model.safetensors.
  static Result<SafetensorsCheckpoint> open_dir(const std::string& dir);
  // Opens one safetensors file.
  static Result<SafetensorsCheckpoint> open_file(const std::string& path);

 private:
  Status add_shard(const std::string& path, const std::string& label);

  std::vector<std::unique_ptr<SafetensorsShard>> shards_;  // stable addresses for the views
  std::map<std::string, std::string> tensor_file_;  // name -> file it came from
};

}  // namespace ds
