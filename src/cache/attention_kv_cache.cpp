// AttentionKvCache: block tables over the shared pool; matches walk the prompt's keys block by block.
#include "cache/attention_kv_cache.h"

#include <algorithm>

#include "util/check.h"

namespace ds {

AttentionKvCache::AttentionKvCache(int64_t num_blocks, int64_t block_size, int64_t num_layers, int64_t num_kv_heads,
                                   int64_t head_dim, KvDtype dtype)
    : storage_(num_blocks, block_size, num_layers, num_kv_heads, head_dim, dtype),
      pool_(num_blocks),
      block_tokens_(new int32_t[static_cast<size_t>(num_blocks * block_size)]) {}

std::optional<int32_t> AttentionKvCache::find_block(std::span<const int32_t> tokens, std::span<const uint64_t> keys,
                                                    int64_t b, bool decoded) const {
  const int64_t B = block_size();
  for (const KeyFamily family : {KeyFamily::exact, KeyFamily::decoded}) {
    if (family == KeyFamily::decoded && !decoded) break;
    const auto block = pool_.find(family_key(keys[static_cast<size_t>((b + 1) * B)], family));
    if (!block) continue;
    const int32_t* kept = block_tokens_.get() + *block * B;
    if (std::equal(kept, kept + B, tokens.begin() + b * B)) return block;
  }
  return std::nullopt;
}

AttentionKvCache::Match AttentionKvCache::match(std::span<const int32_t> tokens, std::span<const uint64_t> keys,
                                                int64_t max_blocks, bool decoded) const {
  Match m;
  const int64_t full = std::min<int64_t>(max_blocks, static_cast<int64_t>(tokens.size()) / block_size());
  for (; m.blocks < full; ++m.blocks) {
    const auto block = find_block(tokens, keys, m.blocks, decoded);
    if (!block) break;
    if (pool_.ref_count(*block) == 0) ++m.unreferenced;
  }
  return m;
}

void AttentionKvCache::share(std::vector<int32_t>& table, std::span<const int32_t> tokens,
                             std::span<const uint64_t> keys, int64_t blocks, bool decoded) {
  DS_CHECK(table.empty(), "sharing cached blocks into a table that holds ", table.size());
  for (int64_t b = 0; b < blocks; ++b) {
    const auto block = find_block(tokens, keys, b, decoded);
    DS_CHECK(block.has_value(), "cached block ", b, " of a planned prefix hit is gone");
    pool_.acquire(*block);
    table.push_back(*block);
  }
}

void AttentionKvCache::grow(std::vector<int32_t>& table, int64_t positions) {
  while (static_cast<int64_t>(table.size()) < blocks_for(positions)) {
    const auto block = pool_.allocate();
    DS_CHECK(block.has_value(), "cache plan takes more KV blocks than are free");
    table.push_back(*block);
  }
}

int64_t AttentionKvCache::key_blocks(std::span<const int32_t> table, std::span<const int32_t> tokens,
                                     std::span<const uint64_t> keys, int64_t first, int64_t positions,
                                     KeyFamily family) {
  const int64_t B = block_size();
  const int64_t full = std::min<int64_t>(positions / B, static_cast<int64_t>(table.size()));
  for (int64_t b = first; b < full; ++b) {
    const int32_t block = table[static_cast<size_t>(b)];
    if (pool_.set_key(block, family_key(keys[static_cast<size_t>((b + 1) * B)], family)))
      std::copy_n(tokens.begin() + b * B, B, block_tokens_.get() + block * B);
  }
  return std::max(first, full);
}

void AttentionKvCache::release(std::vector<int32_t>& table) {
  // Last blocks first, so a sequence's tail is evicted before the prefix others may share.
  for (auto it = table.rbegin(); it != table.rend(); ++it) pool_.release(*it);
  table.clear();
}

bool AttentionKvCache::adopt_block(uint64_t key, std::span<const int32_t> tokens, const std::byte* kv,
                                   Backend& backend) {
  DS_CHECK(static_cast<int64_t>(tokens.size()) == block_size(), "adopting a block of ", tokens.size(), " tokens");
  if (pool_.find(key)) return false;
  const auto block = pool_.allocate_uncached();
  if (!block) return false;
  storage_.restore_block(*block, kv, backend);
  pool_.set_key(*block, key);
  std::copy(tokens.begin(), tokens.end(), block_tokens_.get() + *block * block_size());
  pool_.release(*block);
  return true;
}

}  // namespace ds
