// Split-set discovery by llama.cpp's naming (llama_split_path: "%s-%05d-of-%05d.gguf") and the checks
// that make a set one model.
#include "io/gguf_set.h"

#include <cstdio>
#include <filesystem>
#include <unordered_map>

namespace ds {
namespace {
namespace fs = std::filesystem;

// n decimal digits at the start of s, as a number; nullopt if s is shorter or not all digits.
std::optional<int64_t> digits(std::string_view s, size_t n) {
  if (s.size() < n) return std::nullopt;
  int64_t value = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

Result<std::unique_ptr<GgufPart>> open_part(const fs::path& path) {
  auto part = std::make_unique<GgufPart>();
  part->name = path.filename().string();
  DS_ASSIGN_OR_RETURN(part->file, MappedFile::open(path.string()));
  DS_ASSIGN_OR_RETURN(part->gguf, parse_gguf(part->file.bytes(), part->name));
  return part;
}

// The integer at `key`, or `fallback` when the key is absent.
Result<int64_t> integer_or(const GgufFile& gguf, const char* key, int64_t fallback) {
  const GgufEntry* entry = gguf.find(key);
  return entry ? entry->integer() : Result<int64_t>(fallback);
}

std::string architecture(const GgufFile& gguf) {
  const GgufEntry* entry = gguf.find("general.architecture");
  if (entry == nullptr) return "";
  auto value = entry->string();
  return value.ok() ? std::string(*value) : "";
}

std::string part_name(const std::string& stem, int64_t index, int64_t count) {
  char suffix[64];  // room for two 64-bit numbers, whatever a file's metadata claims
  std::snprintf(suffix, sizeof suffix, "-%05lld-of-%05lld.gguf", static_cast<long long>(index), static_cast<long long>(count));
  return stem + suffix;
}

}  // namespace

std::optional<SplitName> parse_split_name(std::string_view file_name) {
  constexpr std::string_view kTail = ".gguf";
  constexpr size_t kSuffix = 1 + 5 + 4 + 5;  // "-00001-of-00003"
  if (!file_name.ends_with(kTail) || file_name.size() < kSuffix + kTail.size()) return std::nullopt;
  const std::string_view suffix = file_name.substr(file_name.size() - kTail.size() - kSuffix, kSuffix);
  const auto index = digits(suffix.substr(1), 5), count = digits(suffix.substr(10), 5);
  if (suffix[0] != '-' || suffix.substr(6, 4) != "-of-" || !index || !count) return std::nullopt;
  return SplitName{std::string(file_name.substr(0, file_name.size() - kTail.size() - kSuffix)), *index, *count};
}

Result<GgufSet> GgufSet::open(const std::string& path) {
  GgufSet set;
  const fs::path given(path);
  const std::string file_name = given.filename().string();
  const std::optional<SplitName> split = parse_split_name(file_name);
  if (!split) {
    DS_ASSIGN_OR_RETURN(auto part, open_part(given));
    DS_ASSIGN_OR_RETURN(const int64_t count, integer_or(part->gguf, "split.count", 1));
    if (count > 1)
      return Status::errorf(part->name, ": this file is one part of a ", count,
                            "-part split set (split.count), but its name does not say which part (expected a name ending in ",
                            part_name("", 1, count), ")");
    set.parts_.push_back(std::move(part));
  } else {
    const std::string& stem = split->stem;
    const int64_t count = split->count;
    if (count < 1) return Status::errorf(file_name, ": a split set of ", count, " parts");
    for (int64_t i = 1; i <= count; ++i) {
      const fs::path part_path = given.parent_path() / part_name(stem, i, count);
      if (!fs::exists(part_path))
        return Status::errorf("split set ", part_name(stem, 1, count), ": part ", i, " of ", count, " (", part_path.string(),
                              ") is missing");
      DS_ASSIGN_OR_RETURN(auto part, open_part(part_path));
      DS_ASSIGN_OR_RETURN(const int64_t no, integer_or(part->gguf, "split.no", -1));
      DS_ASSIGN_OR_RETURN(const int64_t parts, integer_or(part->gguf, "split.count", -1));
      if (no != i - 1 || parts != count)
        return Status::errorf(part->name, ": expected part ", i, " of ", count, " (split.no ", i - 1, ", split.count ", count,
                              "), found split.no ", no, ", split.count ", parts, " (a part of another set?)");
      // Later parts of llama.cpp's sets carry only the split keys; one that names an architecture must agree.
      if (i > 1 && !architecture(part->gguf).empty() && architecture(part->gguf) != architecture(set.parts_.front()->gguf))
        return Status::errorf(part->name, ": architecture \"", architecture(part->gguf), "\", but part 1 is \"",
                              architecture(set.parts_.front()->gguf), "\" (a part of another model?)");
      set.parts_.push_back(std::move(part));
    }
  }
  std::unordered_map<std::string_view, const GgufPart*> owner;
  for (const auto& part : set.parts_) {
    for (const GgufTensor& t : part->gguf.tensors) {
      if (auto [it, fresh] = owner.emplace(t.name, part.get()); !fresh)
        return Status::errorf("tensor \"", t.name, "\" appears in both ", it->second->name, " and ", part->name);
      set.tensors_.push_back(GgufSetTensor{&t, part.get()});
    }
  }
  if (set.parts_.size() > 1) {
    DS_ASSIGN_OR_RETURN(const int64_t promised, integer_or(set.metadata(), "split.tensors.count", -1));
    if (promised != static_cast<int64_t>(set.tensors_.size()))
      return Status::errorf(set.parts_.front()->name, ": split.tensors.count says ", promised, " tensors, the ",
                            set.parts_.size(), " parts hold ", set.tensors_.size());
  }
  return set;
}

const GgufSetTensor* GgufSet::tensor(std::string_view name) const {
  for (const GgufSetTensor& t : tensors_)
    if (t.info->name == name) return &t;
  return nullptr;
}

uint64_t GgufSet::file_bytes() const {
  uint64_t bytes = 0;
  for (const auto& part : parts_) bytes += part->file.bytes().size();
  return bytes;
}

}  // namespace ds
