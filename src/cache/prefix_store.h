// PrefixStore: the prefix cache on disk (--prefix-cache-dir), so it survives restarts. One file
// per KV block or DeltaNet snapshot (prefix_store_record.h), named by kind and key, within a byte
// budget (--prefix-cache-disk): the oldest files (least recently written or refreshed; the order
// is the files' modification times, so it survives restarts) are deleted first to make room. Files are written to NAME.tmp and renamed, so a crash never leaves a half
// file under a real name; a torn file after a power loss fails its checksum and is skipped.
//
// Files are trusted only after their header names this model, geometry, format and engine version
// and their whole content validates. A file from another model, geometry or version is skipped
// with a warning and left alone (it counts toward the budget and ages out); a truncated or corrupt
// file is skipped with a warning and deleted. Nothing a file holds can crash the reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cache/prefix_store_record.h"
#include "util/function_ref.h"
#include "util/status.h"

namespace ds {

// Creates `dir` if needed and checks that a file can be written there (a clear error if not).
Status prepare_prefix_store_dir(const std::filesystem::path& dir);

class PrefixStore {
 public:
  // Opens (creating) `dir` and indexes the files already there by their headers.
  static Result<std::unique_ptr<PrefixStore>> open(const std::filesystem::path& dir, uint64_t budget_bytes,
                                                   const StoreIdentity& identity, const CacheGeometry& geometry,
                                                   int64_t vocab_size);

  const std::filesystem::path& dir() const { return dir_; }
  uint64_t budget_bytes() const { return budget_; }
  uint64_t bytes_used() const { return used_; }
  int64_t files() const { return static_cast<int64_t>(files_.size()); }
  int64_t write_failures() const { return write_failures_; }

  // Spills a record. A file this store trusts already holding it (same kind and key: the content
  // of a key is fixed by its tokens) is only marked newest. Failures are logged, never fatal.
  void put(const KvBlockRecord& record);
  void put(const SnapshotRecord& record);

  struct Reloaded {
    int64_t snapshots = 0, blocks = 0;
    uint64_t bytes = 0;
    std::vector<std::string> skipped;  // "FILE: why", one per file skipped (also logged as a warning)
  };
  // Reads the newest `max_snapshots` snapshot files and `max_blocks` KV block files, each kind
  // oldest first (so the newest end up most recently used), and hands each valid record to its
  // sink, which returns whether it took it. Files skipped when the store was opened are reported
  // here too.
  Reloaded reload(int64_t max_snapshots, int64_t max_blocks, FunctionRef<bool(SnapshotRecord&&)> take_snapshot,
                  FunctionRef<bool(KvBlockRecord&&)> take_block);

 private:
  struct File {
    uint64_t bytes = 0;
    int64_t order = 0;  // larger: newer
    bool trusted = false;
    RecordKind kind = RecordKind::kv_block;
  };

  PrefixStore(std::filesystem::path dir, uint64_t budget, StoreIdentity identity, CacheGeometry geometry,
              int64_t vocab_size);
  void scan();
  void put_bytes(const std::string& name, RecordKind kind, const std::vector<std::byte>& bytes);
  void skip(const std::string& name, const std::string& why, bool remove);
  void erase(std::string name, bool remove_file);
  void touch(const std::string& name);
  void stamp(const std::string& name);

  std::filesystem::path dir_;
  uint64_t budget_;
  StoreIdentity identity_;
  CacheGeometry geometry_;
  int64_t vocab_size_;
  std::map<std::string, File> files_;
  std::set<std::pair<int64_t, std::string>> by_age_;  // (order, name): oldest first
  int64_t next_order_ = 0;
  std::filesystem::file_time_type last_stamp_{};  // the newest modification time given to a file
  uint64_t used_ = 0;
  int64_t write_failures_ = 0;
  std::vector<std::string> skipped_;  // skipped since the last reload
  std::vector<std::byte> file_;       // the file being written, reused (its pages stay mapped)
};

}  // namespace ds
