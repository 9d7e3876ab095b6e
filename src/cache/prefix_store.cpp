// PrefixStore: an in-memory index of the directory (name → size, age, trusted) kept in step with
// every write and delete, so the budget is enforced without listing the directory again.
#include "cache/prefix_store.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include "util/log.h"

namespace ds {
namespace {

namespace fs = std::filesystem;
constexpr const char* kSuffix = ".dspc";
constexpr const char* kTmpSuffix = ".dspc.tmp";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string file_name(RecordKind kind, uint64_t key) {
  char name[48];
  std::snprintf(name, sizeof(name), "%s-%016llx%s", kind == RecordKind::snapshot ? "snapshot" : "block",
                static_cast<unsigned long long>(key), kSuffix);
  return name;
}

std::vector<std::byte> read_bytes(const fs::path& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> bytes;
  if (!in) return bytes;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(std::max<std::streamoff>(0, in.tellg()));
  in.seekg(0);
  bytes.resize(std::min(size, limit));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  return bytes;
}

bool write_file(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && written;
}

}  // namespace

Status prepare_prefix_store_dir(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return Status::errorf("--prefix-cache-dir ", dir.string(), ": cannot create the directory (", error.message(), ")");
  if (!fs::is_directory(dir, error)) return Status::errorf("--prefix-cache-dir ", dir.string(), ": expected a directory, found a file");
  const fs::path probe = dir / ".write-probe.dspc.tmp";
  if (!write_file(probe, std::vector<std::byte>(8))) {
    const std::string why = std::strerror(errno);
    fs::remove(probe, error);
    return Status::errorf("--prefix-cache-dir ", dir.string(), ": cannot write there (", why, ")");
  }
  fs::remove(probe, error);
  return Status();
}

Result<std::unique_ptr<PrefixStore>> PrefixStore::open(const fs::path& dir, uint64_t budget_bytes,
                                                       const StoreIdentity& identity, const CacheGeometry& geometry,
                                                       int64_t vocab_size) {
  DS_TRY(prepare_prefix_store_dir(dir));
  std::unique_ptr<PrefixStore> store(new PrefixStore(dir, budget_bytes, identity, geometry, vocab_size));
  store->scan();
  return store;
}

PrefixStore::PrefixStore(fs::path dir, uint64_t budget, StoreIdentity identity, CacheGeometry geometry,
                         int64_t vocab_size)
    : dir_(std::move(dir)),
      budget_(budget),
      identity_(std::move(identity)),
      geometry_(geometry),
      vocab_size_(vocab_size) {}

void PrefixStore::scan() {
  struct Found {
    fs::file_time_type written;
    std::string name;
    uint64_t bytes;
  };
  std::vector<Found> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(error)) continue;
    if (ends_with(name, kTmpSuffix)) {
      fs::remove(entry.path(), error);  // a write a crash interrupted
    } else if (ends_with(name, kSuffix)) {
      found.push_back({entry.last_write_time(error), name, entry.file_size(error)});
    }
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.written != b.written ? a.written < b.written : a.name < b.name;
  });
  if (!found.empty()) last_stamp_ = found.back().written;
  for (const Found& f : found) {
    const std::vector<std::byte> header = read_bytes(dir_ / f.name, kPrefixStoreHeaderBytes);
    File file{f.bytes, next_order_++, false, RecordKind::kv_block};
    files_[f.name] = file;
    by_age_.emplace(file.order, f.name);
    used_ += f.bytes;
    const auto kind = decode_header(header, identity_);
    if (kind.ok()) {
      files_[f.name].trusted = true;
      files_[f.name].kind = *kind;
    } else {
      // A header that is not even ours is garbage; a well-formed one belongs to another model,
      // geometry or version that may come back, so it stays until it ages out.
      const bool ours = header.size() == kPrefixStoreHeaderBytes && std::memcmp(header.data(), "dsprefix", 8) == 0;
      skip(f.name, kind.status().message(), !ours);
    }
  }
  while (used_ > budget_ && !by_age_.empty()) erase(by_age_.begin()->second, true);
}

void PrefixStore::skip(const std::string& name, const std::string& why, bool remove) {
  log::warn("prefix cache: skipping ", (dir_ / name).string(), ": ", why, remove ? " (removed)" : "");
  skipped_.push_back(name + ": " + why);
  if (remove) erase(name, true);
}

void PrefixStore::erase(std::string name, bool remove_file) {  // by value: callers pass by_age_'s own copy
  const auto it = files_.find(name);
  if (it == files_.end()) return;
  used_ -= it->second.bytes;
  by_age_.erase({it->second.order, name});
  files_.erase(it);
  std::error_code error;
  if (remove_file) fs::remove(dir_ / name, error);
}

void PrefixStore::touch(const std::string& name) {
  File& file = files_.at(name);
  by_age_.erase({file.order, name});
  file.order = next_order_++;
  by_age_.emplace(file.order, name);
  stamp(name);
}

void PrefixStore::stamp(const std::string& name) {
  // Kernels stamp files with a coarse clock (one tick is milliseconds), so files written in one
  // tick would tie; each gets a distinct, increasing time instead. A failure only ages it sooner.
  last_stamp_ = std::max(fs::file_time_type::clock::now(), last_stamp_ + std::chrono::nanoseconds(1));
  std::error_code error;
  fs::last_write_time(dir_ / name, last_stamp_, error);
}

void PrefixStore::put(const KvBlockRecord& record) {
  const std::string name = file_name(RecordKind::kv_block, record.key);
  if (const auto it = files_.find(name); it != files_.end() && it->second.trusted) return touch(name);
  encode_record(identity_, record, file_);
  put_bytes(name, RecordKind::kv_block, file_);
}

void PrefixStore::put(const SnapshotRecord& record) {
  // A snapshot whose key holds image content (prefix_key.h, KeyedContent) is not the key of its
  // tokens, so a reload could not check it (and would delete it): it stays in memory only.
  const KeyFamily family = record.exact ? KeyFamily::exact : KeyFamily::decoded;
  if (family_key(prefix_keys(record.prefix, geometry_.identity()).back(), family) != record.key) return;
  const std::string name = file_name(RecordKind::snapshot, record.key);
  if (const auto it = files_.find(name); it != files_.end() && it->second.trusted) return touch(name);
  encode_record(identity_, record, file_);
  put_bytes(name, RecordKind::snapshot, file_);
}

void PrefixStore::put_bytes(const std::string& name, RecordKind kind, const std::vector<std::byte>& bytes) {
  if (bytes.size() > budget_) return;
  erase(name, true);  // an untrusted file of that name (another model's, say) makes way
  while (used_ + bytes.size() > budget_ && !by_age_.empty()) erase(by_age_.begin()->second, true);
  const fs::path path = dir_ / name;
  const fs::path tmp = dir_ / (name.substr(0, name.size() - std::strlen(kSuffix)) + kTmpSuffix);
  std::error_code error;
  bool written = write_file(tmp, bytes);
  std::string why = written ? "" : std::strerror(errno);
  if (written) {
    fs::rename(tmp, path, error);
    written = !error;
    if (error) why = error.message();
  }
  if (!written) {
    fs::remove(tmp, error);
    if (write_failures_++ == 0)
      log::warn("prefix cache: cannot write ", path.string(), " (", why, "); evicted entries are dropped until writes work");
    return;
  }
  stamp(name);
  File file{bytes.size(), next_order_++, true, kind};
  files_[name] = file;
  by_age_.emplace(file.order, name);
  used_ += file.bytes;
}

PrefixStore::Reloaded PrefixStore::reload(int64_t max_snapshots, int64_t max_blocks,
                                          FunctionRef<bool(SnapshotRecord&&)> take_snapshot,
                                          FunctionRef<bool(KvBlockRecord&&)> take_block) {
  Reloaded reloaded;
  // The newest trusted files of each kind, then oldest of those first.
  std::vector<std::string> snapshots, blocks;
  for (auto it = by_age_.rbegin(); it != by_age_.rend(); ++it) {
    const File& file = files_.at(it->second);
    if (!file.trusted) continue;
    auto& picked = file.kind == RecordKind::snapshot ? snapshots : blocks;
    if (static_cast<int64_t>(picked.size()) < (file.kind == RecordKind::snapshot ? max_snapshots : max_blocks))
      picked.push_back(it->second);
  }
  for (std::vector<std::string>* picked : {&snapshots, &blocks}) {
    for (auto it = picked->rbegin(); it != picked->rend(); ++it) {
      const std::string& name = *it;
      const std::vector<std::byte> bytes = read_bytes(dir_ / name, SIZE_MAX);
      auto record = decode_record(bytes, identity_, geometry_, vocab_size_);
      if (!record.ok()) {
        skip(name, record.status().message(), true);
        continue;
      }
      bool taken = false;
      if (auto* snapshot = std::get_if<SnapshotRecord>(&*record)) {
        taken = take_snapshot(std::move(*snapshot));
        reloaded.snapshots += taken;
      } else {
        taken = take_block(std::get<KvBlockRecord>(std::move(*record)));
        reloaded.blocks += taken;
      }
      if (taken) reloaded.bytes += bytes.size();
    }
  }
  reloaded.skipped = std::move(skipped_);
  skipped_.clear();
  return reloaded;
}

}  // namespace ds
