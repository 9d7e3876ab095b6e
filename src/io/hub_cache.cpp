#include "io/hub_cache.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "util/str_cat.h"

namespace ds {
namespace fs = std::filesystem;
namespace {

bool id_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace

bool looks_like_hub_id(std::string_view model) {
  const size_t slash = model.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == model.size()) return false;
  if (model.find('/', slash + 1) != std::string_view::npos || model.front() == '.') return false;
  for (char c : model)
    if (c != '/' && !id_character(c)) return false;
  return model.substr(slash + 1).front() != '.';
}

std::string hub_cache_dir() {
  if (std::string dir = environment("HF_HUB_CACHE"); !dir.empty()) return dir;
  if (std::string home = environment("HF_HOME"); !home.empty()) return (fs::path(home) / "hub").string();
  if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty()) return (fs::path(xdg) / "huggingface" / "hub").string();
  return (fs::path(environment("HOME")) / ".cache" / "huggingface" / "hub").string();
}

Result<std::string> resolve_hub_model(std::string_view id, const std::string& cache_dir, std::string_view revision) {
  const std::string folder = "models--" + std::string(id.substr(0, id.find('/'))) + "--" + std::string(id.substr(id.find('/') + 1));
  const fs::path repo = fs::path(cache_dir) / folder;
  const std::string how = str_cat("; download it where the Hub can be reached (`huggingface-cli download ", id,
                                  "`) and copy the cache here, or pass a checkpoint directory");
  std::error_code error;
  if (!fs::is_directory(repo, error))
    return Status::errorf(id, ": no such directory here, and not in the Hugging Face cache (", repo.string(),
                          " does not exist; the cache is $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub)", how);
  std::string commit;
  if (std::ifstream ref(repo / "refs" / std::string(revision)); ref && std::getline(ref, commit)) {
    while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' ')) commit.pop_back();
  } else {
    // No ref (a cache filled by a copy of snapshots/): one snapshot is unambiguous.
    std::vector<std::string> snapshots;
    for (const auto& entry : fs::directory_iterator(repo / "snapshots", error))
      if (entry.is_directory()) snapshots.push_back(entry.path().filename().string());
    if (snapshots.size() != 1)
      return Status::errorf(id, ": ", (repo / "refs" / std::string(revision)).string(), " is missing and ",
                            (repo / "snapshots").string(), " holds ", snapshots.size(),
                            " snapshots, so which one is revision ", revision, " is unknown", how);
    commit = snapshots.front();
  }
  const fs::path snapshot = repo / "snapshots" / commit;
  if (!fs::is_directory(snapshot, error))
    return Status::errorf(id, ": revision ", revision, " is commit ", commit, ", but ", snapshot.string(),
                          " does not exist (an interrupted download?)", how);
  return snapshot.string();
}

Result<std::string> resolve_model_argument(const std::string& model) {
  std::error_code error;
  if (model.empty() || fs::exists(model, error) || !looks_like_hub_id(model)) return model;
  return resolve_hub_model(model, hub_cache_dir());
}

}  // namespace ds
