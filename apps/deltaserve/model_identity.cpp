// Model identity: one byte string of the identifying facts, checksummed.
#include "model_identity.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "cache/checksum64.h"
#include "model/model_loader.h"

namespace ds::app {
namespace {

class Facts {
 public:
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  void add(const std::string& text) {
    add(text.data(), text.size());
    add_value(text.size());
  }
  template <typename T>
  void add_value(T value) { add(&value, sizeof(T)); }
  uint64_t hash() const { return checksum64(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace

Result<uint64_t> model_identity(const std::string& model_dir, const LoadedModel& loaded, const Backend& backend) {
  Facts facts;
  if (is_gguf_path(model_dir)) {
    facts.add(std::string("gguf"));  // its config is its metadata: the tensors below and the file names identify it
    for (const std::string& file : loaded.checkpoint->files()) facts.add(file);
  } else {
    const std::filesystem::path config = std::filesystem::path(model_dir) / "config.json";
    std::ifstream in(config, std::ios::binary);
    if (!in) return Status::errorf("cannot read ", config.string(), " to identify the model for --prefix-cache-dir");
    facts.add(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  }
  for (const auto& [name, tensor] : loaded.checkpoint->tensors()) {
    facts.add(name);
    facts.add_value(static_cast<int>(tensor.dtype));
    for (int64_t dim : tensor.shape) facts.add_value(dim);
    facts.add_value(tensor.nbytes);
    const uint64_t sample = std::min<uint64_t>(64, tensor.nbytes);
    for (uint64_t at : {uint64_t{0}, (tensor.nbytes - sample) / 2, tensor.nbytes - sample}) facts.add(tensor.data + at, sample);
  }
  facts.add_value(static_cast<int>(loaded.weights));
  facts.add_value(static_cast<int>(loaded.model->mode()));
  facts.add(std::string(backend.name()));
  const uint64_t hash = facts.hash();
  return hash == 0 ? 1 : hash;  // 0 means "unknown" to the engine
}

Status identify_model(EngineOptions& options, const std::string& model_dir, const LoadedModel& loaded,
                      const Backend& backend) {
  if (options.prefix_cache_dir.empty()) return Status();
  DS_ASSIGN_OR_RETURN(options.model_identity, model_identity(model_dir, loaded, backend));
  return Status();
}

}  // namespace ds::app
