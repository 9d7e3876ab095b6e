// libFuzzer target: the prefix cache's file reader (what start-up runs on every file of
// --prefix-cache-dir). Every record it accepts must have its geometry's sizes, in-vocabulary
// tokens, a key that hashes its tokens (snapshots), and encode back to exactly the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "cache/prefix_key.h"
#include "prefix_store_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ds;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const CacheGeometry g = fuzz::prefix_store_geometry();
  const StoreIdentity identity = fuzz::prefix_store_identity();
  const auto record = decode_record(bytes, identity, g, fuzz::kPrefixStoreVocab);
  if (!record.ok()) return 0;
  std::vector<std::byte> encoded;
  auto in_vocabulary = [](const std::vector<int32_t>& tokens) {
    for (int32_t t : tokens)
      if (t < 0 || t >= fuzz::kPrefixStoreVocab) return false;
    return true;
  };
  if (const auto* block = std::get_if<KvBlockRecord>(&*record)) {
    if (static_cast<int64_t>(block->tokens.size()) != g.block_size || block->kv.size() != g.block_bytes()) __builtin_trap();
    if (!in_vocabulary(block->tokens)) __builtin_trap();
    encoded = encode_record(identity, *block);
  } else {
    const auto& snapshot = std::get<SnapshotRecord>(*record);
    if (snapshot.prefix.empty() || snapshot.state.size() != snapshot_state_floats(g)) __builtin_trap();
    if (snapshot.tail.size() != tail_bytes_for(g, snapshot.prefix.size()) || !in_vocabulary(snapshot.prefix)) __builtin_trap();
    const KeyFamily family = snapshot.exact ? KeyFamily::exact : KeyFamily::decoded;
    if (family_key(prefix_keys(snapshot.prefix, g.identity()).back(), family) != snapshot.key) __builtin_trap();
    encoded = encode_record(identity, snapshot);
  }
  if (encoded.size() != size || !std::equal(encoded.begin(), encoded.end(), bytes.begin())) __builtin_trap();
  return 0;
}
