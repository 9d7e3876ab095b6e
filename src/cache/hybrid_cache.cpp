// HybridCache: budget split, prefix lookup across both managers, plan application and release.
#include "cache/hybrid_cache.h"

#include <algorithm>

#include "cache/prefix_key.h"
#include "util/check.h"

namespace ds {

CacheGeometry CacheGeometry::of(const TextConfig& c, KvDtype kv_dtype) {
  CacheGeometry g;
  g.kv_dtype = kv_dtype;
  g.attention_layers = c.num_layers_of(LayerType::full_attention);
  g.num_kv_heads = c.num_key_value_heads;
  g.head_dim = c.head_dim;
  g.deltanet_layers = c.num_layers_of(LayerType::linear_attention);
  g.conv_channels = c.conv_dim();
  g.conv_history = c.linear_conv_kernel_dim - 1;
  g.num_v_heads = c.linear_num_value_heads;
  g.k_dim = c.linear_key_head_dim;
  g.v_dim = c.linear_value_head_dim;
  return g;
}

uint64_t CacheGeometry::block_bytes() const {
  return 2 * static_cast<uint64_t>(attention_layers * block_size * num_kv_heads * head_dim * kv_dtype_bytes(kv_dtype));
}

uint64_t CacheGeometry::slot_bytes() const {
  return static_cast<uint64_t>(deltanet_layers * (conv_history * conv_channels + num_v_heads * k_dim * v_dim)) *
         sizeof(float);
}

uint64_t CacheGeometry::identity() const {
  uint64_t key = 0x6465'6c74'6173'6572ull;  // "deltaser"
  for (int64_t v : {block_size, attention_layers, num_kv_heads, head_dim, static_cast<int64_t>(kv_dtype), kKvLayoutVersion,
                    deltanet_layers, conv_channels, conv_history, num_v_heads, k_dim, v_dim})
    key = extend_prefix_key(key, static_cast<int32_t>(v));
  return key;
}

Result<CacheCapacity> size_cache(const CacheGeometry& g, uint64_t budget_bytes, int64_t max_seqs,
                                 uint64_t prefix_cache_bytes, bool spare_slots) {
  if (max_seqs < 1) return Status::errorf("max sequences must be at least 1, found ", max_seqs);
  const uint64_t slots_per_sequence = spare_slots ? 2 : 1;
  // What one sequence's state takes: its slot, and its spare with speculative decoding.
  const uint64_t slot = std::max<uint64_t>(g.slot_bytes(), 1), state = slot * slots_per_sequence;
  const uint64_t block = std::max<uint64_t>(g.block_bytes(), 1);
  const uint64_t minimum = state + block * static_cast<uint64_t>(kSnapshotGrid / g.block_size);
  if (budget_bytes < minimum)
    return Status::errorf("cache memory of ", budget_bytes, " bytes cannot hold one sequence of ", kSnapshotGrid,
                          " tokens (", minimum, " bytes: ", spare_slots ? "two DeltaNet state slots (its own and the "
                          "spare a speculative verify writes into) of " : "a DeltaNet state slot of ", g.slot_bytes(),
                          " + ", kSnapshotGrid, " tokens of KV at ", g.block_bytes(), " bytes per ", g.block_size,
                          "-token block)");
  CacheCapacity capacity;
  capacity.num_slots = static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(max_seqs), std::max<uint64_t>(1, budget_bytes / 2 / state)));
  capacity.num_spare_slots = spare_slots ? capacity.num_slots : 0;
  capacity.num_blocks = static_cast<int64_t>((budget_bytes - static_cast<uint64_t>(capacity.num_slots) * state) / block);
  // A model without attention layers needs no KV, but block tables still count positions.
  if (g.block_bytes() == 0) capacity.num_blocks = static_cast<int64_t>(std::min<uint64_t>(budget_bytes, uint64_t{1} << 20));
  // Each snapshot may carry a KV tail block (rule 4), so each is counted with one. The cap only
  // binds for models whose state is tiny (test models): the pool keeps a record each.
  capacity.num_snapshots =
      static_cast<int64_t>(std::min<uint64_t>(prefix_cache_bytes / (slot + g.block_bytes()), uint64_t{1} << 16));
  return capacity;
}

HybridCache::HybridCache(const CacheGeometry& g, const CacheCapacity& capacity, Backend& backend,
                         SnapshotPolicy policy)
    : geometry_(g),
      backend_(backend),
      policy_(std::move(policy)),
      num_slots_(capacity.num_slots),
      attention_(capacity.num_blocks, g.block_size, g.attention_layers, g.num_kv_heads, g.head_dim, g.kv_dtype),
      deltanet_(capacity.num_slots, capacity.num_spare_slots, capacity.num_snapshots, g.deltanet_layers,
                g.conv_channels, g.conv_history, g.num_v_heads, g.k_dim, g.v_dim),
      spares_(capacity.num_spare_slots > 0) {
  DS_CHECK(capacity.num_spare_slots == 0 || capacity.num_spare_slots == capacity.num_slots,
           "a spare state slot for every slot or none: ", capacity.num_spare_slots, " spares for ", capacity.num_slots);
  DS_CHECK(kSnapshotGrid % g.block_size == 0, "KV block size ", g.block_size, " must divide ", kSnapshotGrid);
  attention_.set_listener(&listeners_);
  deltanet_.snapshots().set_listener(&listeners_);
}

std::vector<uint64_t> HybridCache::prefix_keys(std::span<const int32_t> prompt, std::span<const KeyedContent> contents) const {
  if (!prefix_caching()) return {};
  return ds::prefix_keys(prompt, geometry_.identity(), contents);
}

std::vector<int64_t> HybridCache::snapshot_positions(std::span<const int32_t> prompt) const {
  if (!prefix_caching()) return {};
  return policy_.positions(prompt);
}

PrefixHit HybridCache::find_prefix(std::span<const int32_t> prompt, std::span<const uint64_t> keys, int64_t limit) const {
  PrefixHit hit;
  if (!prefix_caching() || keys.size() != prompt.size() + 1) return hit;
  const int64_t B = geometry_.block_size;
  limit = std::min<int64_t>(limit, static_cast<int64_t>(prompt.size()));
  // Exact: grid positions, every block exact.
  const auto exact_blocks = attention_.match(prompt, keys, limit / B);
  for (int64_t p = exact_blocks.blocks * B / kSnapshotGrid * kSnapshotGrid; p > 0; p -= kSnapshotGrid) {
    const auto snapshot = deltanet_.find_snapshot(keys[static_cast<size_t>(p)], prompt.first(static_cast<size_t>(p)));
    if (!snapshot) continue;
    hit.tokens = p;
    hit.blocks = p / B;
    hit.snapshot = *snapshot;
    // Recount the unreferenced blocks within the hit only.
    hit.unreferenced = attention_.match(prompt, keys, hit.blocks).unreferenced;
    break;
  }
  // Decoded: any position past the exact hit whose full blocks are cached in either family; the
  // tail of a partial last block travels with the snapshot. A hash probe per candidate position.
  if (deltanet_.snapshots().decoded() == 0) return hit;
  const auto blocks = attention_.match(prompt, keys, limit / B, /*decoded=*/true);
  for (int64_t p = std::min(limit, blocks.blocks * B + B - 1); p > hit.tokens; --p) {
    const auto snapshot = deltanet_.find_snapshot(family_key(keys[static_cast<size_t>(p)], KeyFamily::decoded),
                                                  prompt.first(static_cast<size_t>(p)));
    if (!snapshot) continue;
    hit.tokens = p;
    hit.blocks = p / B;
    hit.snapshot = *snapshot;
    hit.exact = false;
    hit.unreferenced = attention_.match(prompt, keys, hit.blocks, /*decoded=*/true).unreferenced;
    break;
  }
  return hit;
}

void HybridCache::take_snapshot(const SequenceCache& s, uint64_t key, std::span<const int32_t> prefix) {
  const auto p = static_cast<int64_t>(prefix.size());
  const int64_t B = geometry_.block_size;
  const bool tail = p % B != 0;
  const SnapshotPool::Storage storage =
      deltanet_.take_snapshot(s.slot, key, prefix, s.exact, tail ? kv().block_bytes() : 0, backend_);
  if (storage.state != nullptr && tail) kv().save_block(s.blocks[static_cast<size_t>(p / B)], storage.tail.data(), backend_);
}

void HybridCache::cache_prefix(SequenceCache& s, std::span<const int32_t> prompt, std::span<const uint64_t> keys,
                               int64_t computed, bool snapshot) {
  if (!prefix_caching()) return;
  computed = std::min<int64_t>(computed, static_cast<int64_t>(prompt.size()));
  const KeyFamily family = s.exact ? KeyFamily::exact : KeyFamily::decoded;
  s.keyed_blocks = attention_.key_blocks(s.blocks, prompt, keys, s.keyed_blocks, computed, family);
  if (snapshot && s.slot >= 0)
    take_snapshot(s, family_key(keys[static_cast<size_t>(computed)], family), prompt.first(static_cast<size_t>(computed)));
}

void HybridCache::cache_generation(SequenceCache& s, std::span<const int32_t> tokens,
                                   std::span<const uint64_t> prompt_keys, int64_t computed) {
  if (!prefix_caching() || s.slot < 0 || computed <= 0 || prompt_keys.empty()) return;
  computed = std::min<int64_t>(computed, static_cast<int64_t>(tokens.size()));
  // keys[p]: key of tokens[0, p), the prompt's then extended over the generated tokens.
  std::vector<uint64_t> keys(prompt_keys.begin(), prompt_keys.end());  // [computed + 1]
  keys.resize(std::max(keys.size(), static_cast<size_t>(computed + 1)));
  for (size_t p = prompt_keys.size(); p <= static_cast<size_t>(computed); ++p)
    keys[p] = extend_prefix_key(keys[p - 1], tokens[p - 1]);
  s.exact = false;
  s.keyed_blocks = attention_.key_blocks(s.blocks, tokens, keys, s.keyed_blocks, computed, KeyFamily::decoded);
  take_snapshot(s, family_key(keys[static_cast<size_t>(computed)], KeyFamily::decoded),
                tokens.first(static_cast<size_t>(computed)));
}

void HybridCache::apply(const CachePlan& plan) {
  for (SequenceCache* sequence : plan.release) release(*sequence);
  // Hits first: sharing takes their cached blocks out of the free queue before growth evicts any.
  for (const CachePlan::Restore& restore : plan.restore) {
    SequenceCache& s = *restore.sequence;
    DS_CHECK(s.empty(), "restoring a prefix into a sequence that holds a cache");
    attention_.share(s.blocks, restore.prompt, restore.keys, restore.hit.blocks, !restore.hit.exact);
    s.keyed_blocks = restore.hit.blocks;
    s.exact = restore.hit.exact;
    take_slot(s, restore.hit.snapshot);
    // A hit inside a block: the filled part of that block, into a block of its own.
    if (const auto tail = deltanet_.snapshots().tail(restore.hit.snapshot); !tail.empty()) {
      attention_.grow(s.blocks, restore.hit.tokens);
      kv().restore_block(s.blocks.back(), tail.data(), backend_);
    }
  }
  for (const CachePlan::Grow& grow : plan.grow) {
    SequenceCache& s = *grow.sequence;
    if (s.slot < 0) take_slot(s, -1);
    attention_.grow(s.blocks, grow.positions);
  }
}

void HybridCache::take_slot(SequenceCache& s, int32_t snapshot) {
  const auto slot = deltanet_.allocate(snapshot, backend_);
  DS_CHECK(slot.has_value(), "cache plan takes more state slots than are free");
  s.slot = *slot;
  if (!spares_) return;
  const auto spare = deltanet_.allocate_spare();
  DS_CHECK(spare.has_value(), "a spare state slot for every slot, found none free");  // as many spares as slots
  s.spare = *spare;
}

void HybridCache::release(SequenceCache& s) {
  attention_.release(s.blocks);
  s.keyed_blocks = 0;
  s.exact = true;
  if (s.slot >= 0) deltanet_.release(s.slot);
  if (s.spare >= 0) deltanet_.release(s.spare);
  s.slot = s.spare = -1;
}

}  // namespace ds
