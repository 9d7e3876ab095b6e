// KvBlockPool: one allocation at start-up, a free list of block ids.
#include "cache/kv_block_pool.h"

#include "util/check.h"

namespace ds {

KvBlockPool::KvBlockPool(int64_t num_blocks, int64_t block_size, int64_t num_layers, int64_t num_kv_heads,
                         int64_t head_dim)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      num_layers_(num_layers),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      block_stride_(block_size * num_kv_heads * head_dim),
      size_(num_layers * num_blocks * block_stride_),
      k_(new float[static_cast<size_t>(size_)]),
      v_(new float[static_cast<size_t>(size_)]) {
  DS_CHECK(block_size > 0 && 64 % block_size == 0, "block size ", block_size, " must divide 64");
  for (int64_t b = num_blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
}

std::optional<int32_t> KvBlockPool::allocate() {
  if (free_.empty()) return std::nullopt;
  const int32_t block = free_.back();
  free_.pop_back();
  return block;
}

void KvBlockPool::release(int32_t block) {
  DS_CHECK(block >= 0 && block < num_blocks_, "block ", block);
  free_.push_back(block);
}

KvLayerView KvBlockPool::layer(int64_t layer) {
  DS_CHECK(layer >= 0 && layer < num_layers_, "kv layer ", layer, " of ", num_layers_);
  const int64_t offset = layer * num_blocks_ * block_stride_;
  return KvLayerView{k_.get() + offset, v_.get() + offset, block_size_, block_stride_, num_kv_heads_, head_dim_};
}

}  // namespace ds
