// Prefix-cache records on disk: one file per keyed KV block or DeltaNet snapshot, a fixed header
// naming what produced it (format, engine version, cache geometry, model) and a checksummed
// payload. The reader trusts no byte: every size is checked against the file and the geometry,
// every token id against the vocabulary, the payload against its checksum, and a snapshot's key
// against the hash of its tokens; any mismatch is an error naming expected and found.
//
// Header (64 bytes, little-endian): magic "dsprefix", u32 format version, u32 record kind,
// char[16] engine version (NUL-padded), u64 geometry identity, u64 model identity, u64 payload
// bytes, u64 checksum64 of the payload.
// KV block payload: u64 key, i32 tokens[block_size], then the block's K of every attention layer,
// then its V (KvBlockPool::save_block's layout: [2, attention_layers, block_size × num_kv_heads ×
// head_dim] of kv_dtype). Snapshot payload: u64 key, u64 positions, i32 prefix[positions],
// f32 state[slot floats], u8 exact, u8 pad[7] (zero), u64 tail bytes, the tail (one block's KV
// when the prefix ends inside a block, else none).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "cache/hybrid_cache.h"
#include "util/status.h"

namespace ds {

inline constexpr uint32_t kPrefixStoreFormat = 1;
inline constexpr size_t kPrefixStoreHeaderBytes = 64;
// The engine version written into and required of every file (the project's version).
const char* prefix_store_engine_version();

// What a file must have been written by to be trusted.
struct StoreIdentity {
  uint64_t model = 0;     // the caller's hash of the model's config, weights and compute mode
  uint64_t geometry = 0;  // CacheGeometry::identity()
  std::string engine_version = prefix_store_engine_version();  // at most 15 characters
};

enum class RecordKind : uint32_t { kv_block = 1, snapshot = 2 };

struct KvBlockRecord {
  uint64_t key = 0;                // prefix key at the block's end
  std::vector<int32_t> tokens;     // [block_size]: the block's own tokens (a match compares them)
  std::vector<std::byte> kv;       // [2 (K, V), attention_layers, block_size × num_kv_heads × head_dim] of kv_dtype
};

struct SnapshotRecord {
  uint64_t key = 0;                // family_key(prefix key of `prefix`, exact ? exact : decoded)
  std::vector<int32_t> prefix;     // [positions]
  std::vector<float> state;        // [slot floats]: DeltaNetStateSlots::save's layout
  bool exact = true;               // KeyFamily::exact: bit for bit what a cold prefill computes (on the 64-token grid)
  std::vector<std::byte> tail;     // the KV block the prefix ends inside (block_bytes), empty when it ends on one
};

using StoreRecord = std::variant<KvBlockRecord, SnapshotRecord>;

// Bytes of each part of a record for this geometry.
uint64_t kv_block_payload_bytes(const CacheGeometry& geometry);
uint64_t snapshot_state_floats(const CacheGeometry& geometry);
// The tail a snapshot of `positions` tokens carries: one block's KV when it ends inside a block.
uint64_t tail_bytes_for(const CacheGeometry& geometry, uint64_t positions);

// A whole file: header + payload; into `file` (its capacity reused) or a new buffer.
void encode_record(const StoreIdentity& identity, const KvBlockRecord& record, std::vector<std::byte>& file);
void encode_record(const StoreIdentity& identity, const SnapshotRecord& record, std::vector<std::byte>& file);
std::vector<std::byte> encode_record(const StoreIdentity& identity, const KvBlockRecord& record);
std::vector<std::byte> encode_record(const StoreIdentity& identity, const SnapshotRecord& record);

// The header alone (the first kPrefixStoreHeaderBytes of a file): checks magic, format, version
// and identities, returns the kind. Lets a directory scan classify files without reading them.
Result<RecordKind> decode_header(std::span<const std::byte> file, const StoreIdentity& identity);
// A whole file, validated against the identity, the geometry and the vocabulary.
Result<StoreRecord> decode_record(std::span<const std::byte> file, const StoreIdentity& identity,
                                  const CacheGeometry& geometry, int64_t vocab_size);

}  // namespace ds
