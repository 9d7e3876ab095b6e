// KvBlockPool: one allocation at start-up.
#include "cache/kv_block_pool.h"

#include "util/check.h"

namespace ds {

KvBlockPool::KvBlockPool(int64_t num_blocks, int64_t block_size, int64_t num_layers, int64_t num_kv_heads,
                         int64_t head_dim, KvDtype dtype)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      num_layers_(num_layers),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      dtype_(dtype),
      block_stride_(block_size * num_kv_heads * head_dim),
      size_(num_layers * num_blocks * block_stride_),
      k_(static_cast<uint64_t>(size_ * kv_dtype_bytes(dtype))),
      v_(static_cast<uint64_t>(size_ * kv_dtype_bytes(dtype))) {
  DS_CHECK(block_size > 0 && 64 % block_size == 0, "block size ", block_size, " must divide 64");
  DS_CHECK(dtype != KvDtype::bf16 || head_dim % 2 == 0, "a bf16 KV cache keeps keys in dim pairs: head_dim ", head_dim,
           " must be even");
}

KvLayerView KvBlockPool::layer(int64_t layer) {
  DS_CHECK(layer >= 0 && layer < num_layers_, "kv layer ", layer, " of ", num_layers_);
  const int64_t offset = layer * num_blocks_ * block_stride_ * kv_dtype_bytes(dtype_);  // bytes
  return KvLayerView{k_.get() + offset, v_.get() + offset, dtype_, block_size_, block_stride_, num_kv_heads_,
                     head_dim_};
}

void KvBlockPool::save_block(int32_t block, std::byte* out, Backend& backend) {
  DS_CHECK(block >= 0 && block < num_blocks_, "kv block ", block, " of ", num_blocks_);
  const int64_t stride = block_stride_ * kv_dtype_bytes(dtype_);  // bytes of one block of one layer
  for (std::byte* data : {k_.get(), v_.get()})
    for (int64_t l = 0; l < num_layers_; ++l, out += stride)
      backend.copy(out, data + (l * num_blocks_ + block) * stride, static_cast<uint64_t>(stride));
}

void KvBlockPool::restore_block(int32_t block, const std::byte* in, Backend& backend) {
  DS_CHECK(block >= 0 && block < num_blocks_, "kv block ", block, " of ", num_blocks_);
  const int64_t stride = block_stride_ * kv_dtype_bytes(dtype_);
  for (std::byte* data : {k_.get(), v_.get()})
    for (int64_t l = 0; l < num_layers_; ++l, in += stride)
      backend.copy(data + (l * num_blocks_ + block) * stride, in, static_cast<uint64_t>(stride));
}

}  // namespace ds
