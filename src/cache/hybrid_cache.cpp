// HybridCache: budget split, plan application and release over the block pool and state slots.
#include "cache/hybrid_cache.h"

#include <algorithm>

#include "util/check.h"

namespace ds {

CacheGeometry CacheGeometry::of(const TextConfig& c) {
  CacheGeometry g;
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
  return 2 * static_cast<uint64_t>(attention_layers * block_size * num_kv_heads * head_dim) * sizeof(float);
}

uint64_t CacheGeometry::slot_bytes() const {
  return static_cast<uint64_t>(deltanet_layers * (conv_history * conv_channels + num_v_heads * k_dim * v_dim)) *
         sizeof(float);
}

Result<CacheCapacity> size_cache(const CacheGeometry& g, uint64_t budget_bytes, int64_t max_seqs) {
  if (max_seqs < 1) return Status::errorf("max sequences must be at least 1, found ", max_seqs);
  const uint64_t slot = std::max<uint64_t>(g.slot_bytes(), 1), block = std::max<uint64_t>(g.block_bytes(), 1);
  const uint64_t minimum = slot + block * static_cast<uint64_t>(64 / g.block_size);
  if (budget_bytes < minimum)
    return Status::errorf("cache memory of ", budget_bytes, " bytes cannot hold one sequence of 64 tokens (",
                          minimum, " bytes: a DeltaNet state slot of ", g.slot_bytes(), " + 64 tokens of KV at ",
                          g.block_bytes(), " bytes per ", g.block_size, "-token block)");
  CacheCapacity capacity;
  capacity.num_slots = static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(max_seqs), std::max<uint64_t>(1, budget_bytes / 2 / slot)));
  capacity.num_blocks = static_cast<int64_t>((budget_bytes - static_cast<uint64_t>(capacity.num_slots) * slot) / block);
  // A model without attention layers needs no KV, but block tables still count positions.
  if (g.block_bytes() == 0) capacity.num_blocks = static_cast<int64_t>(std::min<uint64_t>(budget_bytes, uint64_t{1} << 20));
  return capacity;
}

HybridCache::HybridCache(const CacheGeometry& g, const CacheCapacity& capacity)
    : geometry_(g),
      num_slots_(capacity.num_slots),
      kv_(capacity.num_blocks, g.block_size, g.attention_layers, g.num_kv_heads, g.head_dim),
      states_(capacity.num_slots, g.deltanet_layers, g.conv_channels, g.conv_history, g.num_v_heads, g.k_dim, g.v_dim) {}

void HybridCache::apply(const CachePlan& plan) {
  for (SequenceCache* sequence : plan.release) release(*sequence);
  for (const CachePlan::Grow& grow : plan.grow) {
    SequenceCache& s = *grow.sequence;
    if (s.slot < 0) {
      const auto slot = states_.allocate();
      DS_CHECK(slot.has_value(), "cache plan takes more state slots than are free");
      s.slot = *slot;
    }
    while (static_cast<int64_t>(s.blocks.size()) < blocks_for(grow.positions)) {
      const auto block = kv_.allocate();
      DS_CHECK(block.has_value(), "cache plan takes more KV blocks than are free");
      s.blocks.push_back(*block);
    }
  }
}

void HybridCache::release(SequenceCache& s) {
  for (int32_t block : s.blocks) kv_.release(block);
  s.blocks.clear();
  if (s.slot >= 0) states_.release(s.slot);
  s.slot = -1;
}

}  // namespace ds
