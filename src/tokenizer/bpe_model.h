// Byte-level BPE model: vocabulary, ranked merges and the merge loop with a word cache
// (HF tokenizers models::bpe::BPE with dropout, unk, prefixes and byte fallback all off).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/status.h"

namespace ds {

class BpeModel {
 public:
  // Looked up by string_view without building a std::string (C++20 heterogeneous lookup).
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
  };
  using Vocab = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

  // `vocab`: raw-byte token -> id; `merges`: pairs of raw-byte tokens in rank order.
  static Result<BpeModel> build(Vocab vocab,
                                const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges);

  BpeModel(BpeModel&& other) noexcept;
  BpeModel& operator=(BpeModel&& other) noexcept;
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Appends the ids of one pre-token (raw bytes). Bytes with no vocabulary symbol are dropped, as HF
  // does without an unk token. Thread-safe.
  void encode_word(std::string_view word, std::vector<int32_t>& ids) const;

  int32_t token_to_id(std::string_view bytes) const;  // -1 if absent
  size_t vocab_size() const { return vocab_.size(); }
  size_t merge_count() const { return merges_.size(); }

 private:
  BpeModel() = default;
  struct Merge {
    int32_t rank;
    int32_t id;
  };
  static uint64_t key(int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }
  const Merge* find_merge(int32_t a, int32_t b) const;
  void merge_word(std::string_view word, std::vector<int32_t>& ids) const;

  Vocab vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  int32_t byte_ids_[256];
  bool ignore_merges_ = false;

  // Word cache as in HF (bounded; words longer than kMaxCachedBytes are not cached). Results never
  // depend on it.
  static constexpr size_t kCacheCapacity = 10000;
  static constexpr size_t kMaxCachedBytes = 256;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace ds
