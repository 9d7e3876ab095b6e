// Writes the prefix-store fuzz target's seed corpus: valid files of both record kinds for the
// fuzz geometry (a KV block, snapshots with and without a tail). Usage: make_prefix_store_seeds DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cache/prefix_key.h"
#include "prefix_store_fuzz.h"

namespace {

void write(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ds;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_prefix_store_seeds DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const CacheGeometry g = fuzz::prefix_store_geometry();
  const StoreIdentity identity = fuzz::prefix_store_identity();
  KvBlockRecord block;
  block.key = 0x0123456789abcdefull;
  block.tokens = {1, 2, 3, 299};
  for (uint64_t i = 0; i < g.block_bytes(); ++i) block.kv.push_back(static_cast<std::byte>(i * 7));
  write(dir / "kv_block", encode_record(identity, block));
  for (int with_tail = 0; with_tail < 2; ++with_tail) {
    // An exact snapshot on the 64-token grid; a decoded one ending inside a block, with its tail.
    SnapshotRecord snapshot;
    for (int32_t i = 0; i < (with_tail ? 67 : 64); ++i) snapshot.prefix.push_back(5 + i);
    snapshot.exact = with_tail == 0;
    snapshot.key = family_key(prefix_keys(snapshot.prefix, g.identity()).back(),
                              snapshot.exact ? KeyFamily::exact : KeyFamily::decoded);
    for (uint64_t i = 0; i < snapshot_state_floats(g); ++i) snapshot.state.push_back(0.25f * static_cast<float>(i) - 1.0f);
    if (with_tail)
      for (uint64_t i = 0; i < g.block_bytes(); ++i) snapshot.tail.push_back(static_cast<std::byte>(0x40 + i));
    write(dir / (with_tail ? "snapshot_tail" : "snapshot"), encode_record(identity, snapshot));
  }
  std::printf("wrote 3 seeds to %s\n", dir.c_str());
  return 0;
}
