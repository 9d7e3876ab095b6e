// The cache geometry and identity the prefix-store fuzz target reads files against, shared with
// the program that writes its seed corpus (make_prefix_store_seeds). The engine version is a fixed
// name, so the seeds stay valid files whatever version the project is at.
#pragma once

#include "cache/prefix_store_record.h"

namespace ds::fuzz {

inline constexpr int64_t kPrefixStoreVocab = 300;

inline CacheGeometry prefix_store_geometry() {
  CacheGeometry g;
  g.block_size = 4;
  g.attention_layers = 1;
  g.num_kv_heads = 1;
  g.head_dim = 2;
  g.kv_dtype = KvDtype::bf16;
  g.deltanet_layers = 1;
  g.conv_channels = 2;
  g.conv_history = 1;
  g.num_v_heads = 1;
  g.k_dim = 2;
  g.v_dim = 2;
  return g;
}

inline StoreIdentity prefix_store_identity() {
  StoreIdentity identity;
  identity.model = 0x5eed;
  identity.geometry = prefix_store_geometry().identity();
  identity.engine_version = "fuzz";
  return identity;
}

}  // namespace ds::fuzz
