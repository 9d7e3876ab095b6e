// The prefix cache on disk: both record kinds round-trip; files from another model, geometry or
// version are skipped with a warning and kept; truncated and corrupted files are skipped, never
// trusted, never a crash; the directory budget deletes the oldest files first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "cache/prefix_key.h"
#include "cache/prefix_store.h"
#include "test_util.h"

namespace ds::prefix_store_test {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kVocab = 1000;

CacheGeometry small_geometry() {
  CacheGeometry g;
  g.attention_layers = 2;
  g.num_kv_heads = 2;
  g.head_dim = 8;
  g.deltanet_layers = 2;
  g.conv_channels = 8;
  g.conv_history = 3;
  g.num_v_heads = 2;
  g.k_dim = 4;
  g.v_dim = 4;
  return g;
}

StoreIdentity identity_of(const CacheGeometry& g, uint64_t model = 42) {
  StoreIdentity identity;
  identity.model = model;
  identity.geometry = g.identity();
  return identity;
}

std::vector<int32_t> tokens(uint64_t seed, int64_t n) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<int32_t>(splitmix64(seed) % kVocab));
  return out;
}

KvBlockRecord block(const CacheGeometry& g, uint64_t seed) {
  KvBlockRecord r;
  r.key = seed * 7919 + 1;
  r.tokens = tokens(seed, g.block_size);
  for (size_t i = 0; i < g.block_bytes(); ++i) r.kv.push_back(static_cast<std::byte>(splitmix64(seed)));
  return r;
}

// Without a tail: an exact snapshot on the 64-token grid. With one: a decoded (rule 4) snapshot
// that ends inside a block and carries that block's KV.
SnapshotRecord snapshot(const CacheGeometry& g, uint64_t seed, bool with_tail) {
  SnapshotRecord r;
  r.prefix = tokens(seed, with_tail ? 70 : 64);
  r.exact = !with_tail;
  r.key = family_key(prefix_keys(r.prefix, g.identity()).back(), r.exact ? KeyFamily::exact : KeyFamily::decoded);
  r.state = test::random_floats(snapshot_state_floats(g), seed);
  if (with_tail)
    for (uint64_t i = 0; i < g.block_bytes(); ++i) r.tail.push_back(static_cast<std::byte>(i * 3));
  return r;
}

void expect_equal(const KvBlockRecord& a, const KvBlockRecord& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.kv, b.kv);
}

void expect_equal(const SnapshotRecord& a, const SnapshotRecord& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.prefix, b.prefix);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.exact, b.exact);
  EXPECT_EQ(a.tail, b.tail);
}

std::vector<std::byte> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

void write_all(const fs::path& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Opens a store over `dir` and reloads everything into vectors.
struct Reload {
  std::vector<SnapshotRecord> snapshots;
  std::vector<KvBlockRecord> blocks;
  PrefixStore::Reloaded report;
};
Reload reload_all(const fs::path& dir, const StoreIdentity& identity, const CacheGeometry& g, uint64_t budget = 1 << 30,
                  int64_t max_snapshots = 100, int64_t max_blocks = 100) {
  auto store = PrefixStore::open(dir, budget, identity, g, kVocab);
  EXPECT_TRUE(store.ok()) << store.status().message();
  Reload out;
  out.report = (*store)->reload(
      max_snapshots, max_blocks,
      [&](SnapshotRecord&& r) {
        out.snapshots.push_back(std::move(r));
        return true;
      },
      [&](KvBlockRecord&& r) {
        out.blocks.push_back(std::move(r));
        return true;
      });
  return out;
}

TEST(PrefixStoreRecord, BothKindsRoundTrip) {
  const CacheGeometry g = small_geometry();
  const StoreIdentity id = identity_of(g);
  const KvBlockRecord b = block(g, 1);
  auto decoded_block = decode_record(encode_record(id, b), id, g, kVocab);
  ASSERT_TRUE(decoded_block.ok()) << decoded_block.status().message();
  expect_equal(std::get<KvBlockRecord>(*decoded_block), b);
  for (bool with_tail : {false, true}) {
    const SnapshotRecord s = snapshot(g, 2, with_tail);
    auto decoded = decode_record(encode_record(id, s), id, g, kVocab);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    expect_equal(std::get<SnapshotRecord>(*decoded), s);
  }
}

TEST(PrefixStoreRecord, TruncatedAtEveryByteIsAnError) {
  const CacheGeometry g = small_geometry();
  const StoreIdentity id = identity_of(g);
  for (const auto& file : {encode_record(id, block(g, 3)), encode_record(id, snapshot(g, 4, true))}) {
    for (size_t size = 0; size < file.size(); ++size)
      ASSERT_FALSE(decode_record(std::span(file).first(size), id, g, kVocab).ok()) << "truncated to " << size;
    std::vector<std::byte> longer = file;
    longer.push_back(std::byte{0});
    EXPECT_FALSE(decode_record(longer, id, g, kVocab).ok());
  }
}

TEST(PrefixStoreRecord, EverySingleByteCorruptionIsAnError) {
  const CacheGeometry g = small_geometry();
  const StoreIdentity id = identity_of(g);
  for (const auto& file : {encode_record(id, block(g, 5)), encode_record(id, snapshot(g, 6, true))}) {
    for (size_t at = 0; at < file.size(); ++at) {
      for (uint8_t flip : {0x01, 0x80, 0xff}) {
        std::vector<std::byte> bad = file;
        bad[at] ^= std::byte{flip};
        ASSERT_FALSE(decode_record(bad, id, g, kVocab).ok()) << "byte " << at << " ^ " << int{flip};
      }
    }
  }
}

TEST(PrefixStoreRecord, ValidChecksumsWithBadContentAreStillErrors) {
  const CacheGeometry g = small_geometry();
  const StoreIdentity id = identity_of(g);
  KvBlockRecord b = block(g, 7);
  b.tokens[3] = static_cast<int32_t>(kVocab);
  auto out_of_vocabulary = decode_record(encode_record(id, b), id, g, kVocab);
  ASSERT_FALSE(out_of_vocabulary.ok());
  EXPECT_NE(out_of_vocabulary.status().message().find("expected an id in [0, 1000)"), std::string::npos)
      << out_of_vocabulary.status().message();
  SnapshotRecord s = snapshot(g, 8, false);
  s.key ^= 1;
  auto wrong_key = decode_record(encode_record(id, s), id, g, kVocab);
  ASSERT_FALSE(wrong_key.ok());
  EXPECT_NE(wrong_key.status().message().find("is not the key of its 64 tokens"), std::string::npos);
  s = snapshot(g, 8, false);
  s.state[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(decode_record(encode_record(id, s), id, g, kVocab).ok());
  s = snapshot(g, 8, false);
  s.tail.resize(g.block_bytes());  // a tail on a snapshot that ends on a block boundary
  EXPECT_FALSE(decode_record(encode_record(id, s), id, g, kVocab).ok());
  s = snapshot(g, 8, true);
  s.tail.resize(g.block_bytes() + 4);
  EXPECT_FALSE(decode_record(encode_record(id, s), id, g, kVocab).ok());
  s = snapshot(g, 8, true);
  s.exact = true;  // an exact snapshot off the 64-token grid (with the exact family's key)
  s.key = prefix_keys(s.prefix, g.identity()).back();
  EXPECT_FALSE(decode_record(encode_record(id, s), id, g, kVocab).ok());
  s = snapshot(g, 8, true);
  s.key = prefix_keys(s.prefix, g.identity()).back();  // a decoded snapshot under the exact family's key
  EXPECT_FALSE(decode_record(encode_record(id, s), id, g, kVocab).ok());
  s = snapshot(g, 8, false);
  s.state.pop_back();  // another geometry's state size
  EXPECT_FALSE(decode_record(encode_record(id, s), id, g, kVocab).ok());
}

TEST(PrefixStore, RecordsSurviveReopeningTheDirectory) {
  test::TempDir tmp;
  const CacheGeometry g = small_geometry();
  const StoreIdentity id = identity_of(g);
  {
    auto store = PrefixStore::open(tmp / "cache", 1 << 30, id, g, kVocab);
    ASSERT_TRUE(store.ok()) << store.status().message();
    (*store)->put(block(g, 1));
    (*store)->put(block(g, 2));
    (*store)->put(snapshot(g, 3, true));
    EXPECT_EQ((*store)->files(), 3);
  }
  const Reload reloaded = reload_all(tmp / "cache", id, g);
  EXPECT_TRUE(reloaded.report.skipped.empty());
  ASSERT_EQ(reloaded.blocks.size(), 2u);
  expect_equal(reloaded.blocks[0], block(g, 1));  // oldest first: the newest ends most recently used
  expect_equal(reloaded.blocks[1], block(g, 2));
  ASSERT_EQ(reloaded.snapshots.size(), 1u);
  expect_equal(reloaded.snapshots[0], snapshot(g, 3, true));
  EXPECT_EQ(reloaded.report.blocks, 2);
  EXPECT_EQ(reloaded.report.snapshots, 1);
  EXPECT_GT(reloaded.report.bytes, 2 * g.block_bytes() + g.slot_bytes());
}

TEST(PrefixStore, SnapshotsKeyedWithImageContentStayInMemory) {
  test::TempDir tmp;
  const CacheGeometry g = small_geometry();
  auto store = PrefixStore::open(tmp / "cache", 1 << 30, identity_of(g), g, kVocab);
  ASSERT_TRUE(store.ok()) << store.status().message();
  SnapshotRecord with_image = snapshot(g, 4, false);
  const KeyedContent image{10, 0x1234};
  with_image.key = prefix_keys(with_image.prefix, g.identity(), std::span(&image, 1)).back();
  ASSERT_NE(with_image.key, snapshot(g, 4, false).key);
  (*store)->put(with_image);
  EXPECT_EQ((*store)->files(), 0) << "a reload could not check its key against its tokens";
  (*store)->put(snapshot(g, 4, false));
  EXPECT_EQ((*store)->files(), 1);
}

TEST(PrefixStore, ReloadTakesTheNewestThatFit) {
  test::TempDir tmp;
  const CacheGeometry g = small_geometry();
  const StoreIdentity id = identity_of(g);
  {
    auto store = PrefixStore::open(tmp / "cache", 1 << 30, id, g, kVocab);
    ASSERT_TRUE(store.ok());
    for (uint64_t i = 1; i <= 5; ++i) (*store)->put(block(g, i));
  }
  const Reload reloaded = reload_all(tmp / "cache", id, g, 1 << 30, 100, 2);
  ASSERT_EQ(reloaded.blocks.size(), 2u);
  expect_equal(reloaded.blocks[0], block(g, 4));
  expect_equal(reloaded.blocks[1], block(g, 5));
}

TEST(PrefixStore, FilesOfAnotherModelGeometryOrVersionAreSkippedWithAWarningAndKept) {
  test::TempDir tmp;
  const CacheGeometry g = small_geometry();
  CacheGeometry bf16 = g;
  bf16.kv_dtype = KvDtype::bf16;
  StoreIdentity other_version = identity_of(g);
  other_version.engine_version = "0.0.9";
  struct Case {
    StoreIdentity writer;
    CacheGeometry geometry;
    std::string why;
  };
  for (const Case& c : {Case{identity_of(g, 43), g, "model identity"}, Case{identity_of(bf16), bf16, "cache geometry"},
                        Case{other_version, g, "written by deltaserve \"0.0.9\""}}) {
    SCOPED_TRACE(c.why);
    const fs::path dir = tmp.path() / c.why.substr(0, 5);
    {
      auto writer = PrefixStore::open(dir, 1 << 30, c.writer, c.geometry, kVocab);
      ASSERT_TRUE(writer.ok());
      KvBlockRecord b = block(c.geometry, 1);
      (*writer)->put(b);
    }
    const Reload reloaded = reload_all(dir, identity_of(g), g);
    EXPECT_TRUE(reloaded.blocks.empty());
    ASSERT_EQ(reloaded.report.skipped.size(), 1u);
    EXPECT_NE(reloaded.report.skipped[0].find(c.why), std::string::npos) << reloaded.report.skipped[0];
    EXPECT_NE(reloaded.report.skipped[0].find("expected"), std::string::npos) << reloaded.report.skipped[0];
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "kept for its owner";
  }
}

TEST(PrefixStore, TruncatedCorruptAndForeignFilesAreSkippedRemovedAndNeverCrash) {
  test::TempDir tmp;
  const CacheGeometry g = small_geometry();
  const StoreIdentity id = identity_of(g);
  const fs::path dir = tmp.path() / "cache";
  {
    auto store = PrefixStore::open(dir, 1 << 30, id, g, kVocab);
    ASSERT_TRUE(store.ok());
    for (uint64_t i = 1; i <= 4; ++i) (*store)->put(block(g, i));
    (*store)->put(snapshot(g, 9, false));
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 5u);
  std::vector<std::byte> bytes = read_all(files[0]);
  write_all(files[0], std::span(bytes).first(bytes.size() / 2));  // truncated
  bytes = read_all(files[1]);
  bytes[bytes.size() - 3] ^= std::byte{0x10};  // corrupt payload
  write_all(files[1], bytes);
  write_all(files[2], std::span(bytes).first(10));  // shorter than a header
  bytes = read_all(files[4]);
  bytes[kPrefixStoreHeaderBytes + 20] ^= std::byte{0x01};  // the snapshot's prefix
  write_all(files[4], bytes);
  write_all(dir / "block-0000000000000001.dspc.tmp", bytes);  // an interrupted write
  const Reload reloaded = reload_all(dir, id, g);
  EXPECT_EQ(reloaded.blocks.size(), 1u);
  EXPECT_TRUE(reloaded.snapshots.empty());
  EXPECT_EQ(reloaded.report.skipped.size(), 4u);
  for (const std::string& why : reloaded.report.skipped) EXPECT_NE(why.find("expected"), std::string::npos) << why;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "garbage is removed";
}

TEST(PrefixStore, TheBudgetDeletesTheOldestFilesFirst) {
  test::TempDir tmp;
  const CacheGeometry g = small_geometry();
  const StoreIdentity id = identity_of(g);
  const uint64_t file_bytes = kPrefixStoreHeaderBytes + kv_block_payload_bytes(g);
  auto store = PrefixStore::open(tmp / "cache", 3 * file_bytes, id, g, kVocab);
  ASSERT_TRUE(store.ok());
  for (uint64_t i = 1; i <= 5; ++i) (*store)->put(block(g, i));
  EXPECT_EQ((*store)->files(), 3);
  EXPECT_EQ((*store)->bytes_used(), 3 * file_bytes);
  (*store)->put(block(g, 3));  // already on disk: only made newest, so 4 is now the oldest
  (*store)->put(block(g, 6));
  store->reset();
  const Reload reloaded = reload_all(tmp / "cache", id, g, 3 * file_bytes);
  ASSERT_EQ(reloaded.blocks.size(), 3u);
  expect_equal(reloaded.blocks[0], block(g, 5));
  expect_equal(reloaded.blocks[1], block(g, 3));
  expect_equal(reloaded.blocks[2], block(g, 6));
  // A smaller budget at the next start trims the directory to it, oldest first.
  const Reload trimmed = reload_all(tmp / "cache", id, g, file_bytes);
  ASSERT_EQ(trimmed.blocks.size(), 1u);
  expect_equal(trimmed.blocks[0], block(g, 6));
}

TEST(PrefixStore, ADirectoryThatCannotBeCreatedIsAClearError) {
  test::TempDir tmp;
  write_all(tmp.path() / "file", std::vector<std::byte>(4));
  const Status status = prepare_prefix_store_dir(tmp.path() / "file" / "cache");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("--prefix-cache-dir"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("cannot create"), std::string::npos) << status.message();
  EXPECT_TRUE(prepare_prefix_store_dir(tmp.path() / "a" / "b").ok());
}

}  // namespace
}  // namespace ds::prefix_store_test
