// KvBlockPool: the storage of attention K/V of every full-attention layer in fixed-size blocks,
// shared by all sequences; a sequence reaches its tokens through its block table (vLLM-style
// paging). Which block belongs to whom is AttentionKvCache's business; the model only reads views.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/backend.h"
#include "util/anonymous_memory.h"

namespace ds {

inline constexpr int64_t kKvBlockSize = 16;  // KV tokens per block; divides the 64-token DeltaNet chunk

class KvBlockPool {
 public:
  // block_size must divide 64 (the DeltaNet chunk), so prefix-cache hits at chunk boundaries end
  // on whole blocks. dtype: the element type (bf16 halves the bytes of a block).
  KvBlockPool(int64_t num_blocks, int64_t block_size, int64_t num_layers, int64_t num_kv_heads, int64_t head_dim,
              KvDtype dtype = KvDtype::fp32);

  int64_t block_size() const { return block_size_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t num_layers() const { return num_layers_; }
  KvDtype dtype() const { return dtype_; }
  // View of full-attention layer `layer` (0-based among full-attention layers).
  KvLayerView layer(int64_t layer);
  uint64_t bytes() const { return 2 * static_cast<uint64_t>(size_ * kv_dtype_bytes(dtype_)); }
  // One block of every layer as a flat copy, [2 (K, V), num_layers, block_stride] of dtype: a
  // prefix-cache snapshot that ends inside a block carries that block's filled part this way.
  uint64_t block_bytes() const { return 2 * static_cast<uint64_t>(num_layers_ * block_stride_ * kv_dtype_bytes(dtype_)); }
  void save_block(int32_t block, std::byte* out, Backend& backend);
  void restore_block(int32_t block, const std::byte* in, Backend& backend);

 private:
  int64_t num_blocks_, block_size_, num_layers_, num_kv_heads_, head_dim_;
  KvDtype dtype_;
  int64_t block_stride_;   // elements per block: block_size × num_kv_heads × head_dim
  // Left uninitialised: a position is written before it is read, and untouched pages of a large
  // budget stay unresident (RSS grows with the context actually used).
  int64_t size_;                       // elements in k_ (and in v_)
  AnonymousArray<std::byte> k_;  // [num_layers, num_blocks, block_size, num_kv_heads, head_dim] of dtype
  AnonymousArray<std::byte> v_;  // same
};

}  // namespace ds
