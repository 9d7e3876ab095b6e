// SafetensorsCheckpoint: single-file and sharded (index.json) checkpoints, checked for
// consistency between the index and the shards.
#include "io/safetensors_checkpoint.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ds {
namespace fs = std::filesystem;

Status SafetensorsCheckpoint::add_shard(const std::string& path, const std::string& label) {
  auto shard = std::make_unique<SafetensorsShard>();
  DS_ASSIGN_OR_RETURN(shard->file, MappedFile::open(path));
  DS_ASSIGN_OR_RETURN(shard->header, parse_safetensors_header(shard->file.bytes(), label));
  const std::byte* data = shard->file.bytes().data() + shard->header.data_offset;
  for (const TensorEntry& entry : shard->header.tensors) {
    if (auto it = tensor_file_.find(entry.name); it != tensor_file_.end())
      return Status::errorf("tensor \"", entry.name, "\" appears in both ", it->second, " and ", label);
    tensor_file_[entry.name] = label;
    tensors_[entry.name] = TensorView{entry.name, entry.dtype, entry.shape, data + entry.begin, entry.end - entry.begin};
  }
  file_names_.push_back(label);
  shards_.push_back(std::move(shard));
  return {};
}

Result<SafetensorsCheckpoint> SafetensorsCheckpoint::open_file(const std::string& path) {
  SafetensorsCheckpoint checkpoint;
  DS_TRY(checkpoint.add_shard(path, fs::path(path).filename().string()));
  return checkpoint;
}

Result<SafetensorsCheckpoint> SafetensorsCheckpoint::open_dir(const std::string& dir) {
  const fs::path index_path = fs::path(dir) / "model.safetensors.index.json";
  const fs::path single_path = fs::path(dir) / "model.safetensors";
  if (!fs::exists(index_path)) {
    if (!fs::exists(single_path))
      return Status::errorf("no weights in ", dir, ": expected model.safetensors or model.safetensors.index.json");
    return open_file(single_path.string());
  }

  std::ifstream in(index_path, std::ios::binary);
  if (!in) return Status::errorf("cannot read ", index_path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const auto index = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded()) return Status::errorf("model.safetensors.index.json: not valid JSON");
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    return Status::errorf("model.safetensors.index.json: expected an object with a \"weight_map\" object");

  std::map<std::string, std::string> weight_map;  // tensor -> shard file name
  std::set<std::string> shard_names;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string())
      return Status::errorf("model.safetensors.index.json: weight_map[\"", name, "\"]: expected a file name, found ", file.type_name());
    const std::string file_name = file.get<std::string>();
    if (file_name.empty() || file_name.find('/') != std::string::npos || file_name == "." || file_name == "..")
      return Status::errorf("model.safetensors.index.json: weight_map[\"", name, "\"]: \"", file_name,
                            "\" is not a plain file name in the checkpoint directory");
    weight_map[name] = file_name;
    shard_names.insert(file_name);
  }
  if (shard_names.empty()) return Status::errorf("model.safetensors.index.json: weight_map is empty");

  SafetensorsCheckpoint checkpoint;
  for (const std::string& shard : shard_names) DS_TRY(checkpoint.add_shard((fs::path(dir) / shard).string(), shard));
  for (const auto& [name, file] : weight_map) {
    auto it = checkpoint.tensor_file_.find(name);
    if (it == checkpoint.tensor_file_.end())
      return Status::errorf("model.safetensors.index.json names tensor \"", name, "\" in ", file, ", but ", file,
                            " does not contain it");
    if (it->second != file)
      return Status::errorf("model.safetensors.index.json names tensor \"", name, "\" in ", file, ", but it is in ",
                            it->second);
  }
  for (const auto& [name, file] : checkpoint.tensor_file_)
    if (!weight_map.count(name))
      return Status::errorf(file, " contains tensor \"", name, "\", which model.safetensors.index.json does not list");
  return checkpoint;
}

}  // namespace ds
