// libFuzzer target: the prefix cache's file reader (what start-up runs on every file of
// --prefix-cache-dir). Every record it accepts must have its geometry's sizes, in-vocabulary
// tokens, a key that hashes its tokens in its family (snapshots), a tail exactly when it ends
// inside a block, and encode back to exactly the input. Each input is read twice: as it is, and
// with the header's payload size and checksum rewritten to match, so mutations reach the payload
// checks behind the checksum (random bytes almost never carry a valid one).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "cache/checksum64.h"
#include "cache/prefix_key.h"
#include "prefix_store_fuzz.h"

namespace {

using namespace ds;

bool in_vocabulary(const std::vector<int32_t>& tokens) {
  return std::all_of(tokens.begin(), tokens.end(), [](int32_t t) { return t >= 0 && t < fuzz::kPrefixStoreVocab; });
}

void check(std::span<const std::byte> bytes) {
  const CacheGeometry g = fuzz::prefix_store_geometry();
  const StoreIdentity identity = fuzz::prefix_store_identity();
  const auto record = decode_record(bytes, identity, g, fuzz::kPrefixStoreVocab);
  if (!record.ok()) {
    if (record.status().message().empty()) __builtin_trap();
    return;
  }
  std::vector<std::byte> encoded;
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
  if (encoded.size() != bytes.size() || !std::equal(encoded.begin(), encoded.end(), bytes.begin())) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  check(bytes);
  if (size >= ds::kPrefixStoreHeaderBytes) {
    std::vector<std::byte> fixed(bytes.begin(), bytes.end());
    const uint64_t payload_bytes = size - ds::kPrefixStoreHeaderBytes;
    const uint64_t checksum = ds::checksum64(std::span(fixed).subspan(ds::kPrefixStoreHeaderBytes));
    std::memcpy(fixed.data() + ds::kPrefixStoreHeaderBytes - 16, &payload_bytes, 8);
    std::memcpy(fixed.data() + ds::kPrefixStoreHeaderBytes - 8, &checksum, 8);
    check(fixed);
  }
  return 0;
}
