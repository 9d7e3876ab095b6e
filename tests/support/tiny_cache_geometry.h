// The smallest hybrid cache geometry (one attention and one DeltaNet layer, every size 1): for tests of
// the caches' bookkeeping, where the contents only need to exist.
#pragma once

#include "cache/hybrid_cache.h"

namespace ds::test {

inline CacheGeometry tiny_cache_geometry() {
  CacheGeometry g;
  g.attention_layers = g.num_kv_heads = g.head_dim = 1;
  g.deltanet_layers = g.conv_channels = g.conv_history = g.num_v_heads = g.k_dim = g.v_dim = 1;
  return g;
}

}  // namespace ds::test
