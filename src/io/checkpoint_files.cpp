// CheckpointFiles: presence checks, plus a look inside tokenizer_config.json for an embedded
// chat_template (older checkpoints keep the template there instead of chat_template.jinja).
#include "io/checkpoint_files.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ds {
namespace fs = std::filesystem;

Result<CheckpointFiles> find_checkpoint_files(const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    return Status::errorf("checkpoint directory ", dir, " does not exist or is not a directory");
  CheckpointFiles files;
  files.dir = dir;
  auto exists = [&](const char* name) { return fs::is_regular_file(fs::path(dir) / name, error); };
  files.generation_config = exists("generation_config.json");
  files.sharded = exists("model.safetensors.index.json");
  files.tokenizer_json = exists("tokenizer.json");
  files.tokenizer_config = exists("tokenizer_config.json");
  if (exists("chat_template.jinja")) {
    files.chat_template_source = "chat_template.jinja";
  } else if (files.tokenizer_config) {
    std::ifstream in(fs::path(dir) / "tokenizer_config.json", std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const auto config = nlohmann::json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
    if (config.is_object() && config.contains("chat_template") && !config["chat_template"].is_null())
      files.chat_template_source = "tokenizer_config.json";
  }
  return files;
}

}  // namespace ds
