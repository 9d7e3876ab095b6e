// Prefix-cache record codec: fields are copied byte by byte (memcpy), so nothing depends on the
// alignment of a buffer read from disk; every read is bounds-checked by a cursor first.
#include "cache/prefix_store_record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "cache/checksum64.h"
#include "cache/prefix_key.h"
#include "cache/snapshot_policy.h"
#include "util/str_cat.h"

#ifndef DELTASERVE_VERSION
#error "ds_cache is built with DELTASERVE_VERSION (src/cache/CMakeLists.txt)"
#endif

namespace ds {
namespace {

constexpr char kMagic[8] = {'d', 's', 'p', 'r', 'e', 'f', 'i', 'x'};
constexpr size_t kVersionBytes = 16;

// Builds a whole file in one buffer: the header's room first, filled in by finish() once the
// payload (and so its size and checksum) is known. The buffer is the caller's, so a spill reuses
// one whose pages are already mapped (a fresh 19 MiB buffer costs ~25 ms of page faults here).
class FileWriter {
 public:
  FileWriter(std::vector<std::byte>& bytes, size_t payload_bytes) : bytes_(bytes) {
    bytes_.clear();
    bytes_.reserve(kPrefixStoreHeaderBytes + payload_bytes);
    bytes_.resize(kPrefixStoreHeaderBytes);
  }
  void raw(const void* data, size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  template <typename T>
  void put(T value) { raw(&value, sizeof(T)); }
  void finish(const StoreIdentity& identity, RecordKind kind);

 private:
  std::vector<std::byte>& bytes_;
};

// Reads fields off a span; a read past the end fails instead of reading.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  size_t left() const { return bytes_.size() - at_; }
  bool raw(void* out, size_t n) {
    if (n > left()) return false;
    if (n > 0) std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
    return true;
  }
  template <typename T>
  bool get(T& out) { return raw(&out, sizeof(T)); }

 private:
  std::span<const std::byte> bytes_;
  size_t at_ = 0;
};

const char* kind_name(uint32_t kind) {
  switch (kind) {
    case static_cast<uint32_t>(RecordKind::kv_block): return "KV block";
    case static_cast<uint32_t>(RecordKind::snapshot): return "snapshot";
    default: return "unknown";
  }
}

std::string hex(uint64_t v) {
  char out[19];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(v));
  return out;
}

void FileWriter::finish(const StoreIdentity& identity, RecordKind kind) {
  const std::span<const std::byte> payload = std::span<const std::byte>(bytes_).subspan(kPrefixStoreHeaderBytes);
  std::byte* at = bytes_.data();
  auto put_header = [&](const void* data, size_t n) {
    std::memcpy(at, data, n);
    at += n;
  };
  const uint32_t format = kPrefixStoreFormat, kind_value = static_cast<uint32_t>(kind);
  char version[kVersionBytes] = {};
  std::memcpy(version, identity.engine_version.data(), std::min(identity.engine_version.size(), kVersionBytes - 1));
  const uint64_t payload_bytes = payload.size(), checksum = checksum64(payload);
  put_header(kMagic, sizeof(kMagic));
  put_header(&format, sizeof(format));
  put_header(&kind_value, sizeof(kind_value));
  put_header(version, kVersionBytes);
  put_header(&identity.geometry, sizeof(uint64_t));
  put_header(&identity.model, sizeof(uint64_t));
  put_header(&payload_bytes, sizeof(payload_bytes));
  put_header(&checksum, sizeof(checksum));
}

Status check_tokens(std::span<const int32_t> tokens, int64_t vocab_size) {
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab_size)
      return Status::errorf("token ", i, " is ", tokens[i], ", expected an id in [0, ", vocab_size, ")");
  return Status();
}

Result<KvBlockRecord> decode_kv_block(Reader& r, const CacheGeometry& g, int64_t vocab_size) {
  KvBlockRecord record;
  record.tokens.resize(static_cast<size_t>(g.block_size));
  record.kv.resize(static_cast<size_t>(g.block_bytes()));
  if (!r.get(record.key) || !r.raw(record.tokens.data(), record.tokens.size() * sizeof(int32_t)) ||
      !r.raw(record.kv.data(), record.kv.size()))
    return Status::error("KV block payload: expected the geometry's size, found fewer bytes");
  DS_TRY(check_tokens(record.tokens, vocab_size));
  return record;
}

Result<SnapshotRecord> decode_snapshot(Reader& r, const CacheGeometry& g, int64_t vocab_size) {
  SnapshotRecord record;
  uint64_t positions = 0;
  if (!r.get(record.key) || !r.get(positions))
    return Status::error("snapshot payload: expected a key and a position count, found fewer bytes");
  const uint64_t state_bytes = snapshot_state_floats(g) * sizeof(float);
  const uint64_t fixed = state_bytes + 16;  // state, exact + pad, tail size
  if (positions == 0 || r.left() < fixed || positions > (r.left() - fixed) / sizeof(int32_t))
    return Status::errorf("snapshot of ", positions, " positions, expected 1 to ",
                          r.left() < fixed ? 0 : (r.left() - fixed) / sizeof(int32_t), " (what the payload holds)");
  record.prefix.resize(positions);
  record.state.resize(snapshot_state_floats(g));
  uint8_t exact = 0, pad[7];
  uint64_t tail_bytes = 0;
  r.raw(record.prefix.data(), positions * sizeof(int32_t));
  r.raw(record.state.data(), state_bytes);
  r.get(exact);
  r.raw(pad, sizeof(pad));
  r.get(tail_bytes);
  if (exact > 1) return Status::errorf("snapshot exact flag is ", int{exact}, ", expected 0 or 1");
  if (std::any_of(std::begin(pad), std::end(pad), [](uint8_t b) { return b != 0; }))
    return Status::error("snapshot padding: expected zero bytes, found others");
  record.exact = exact == 1;
  if (tail_bytes != tail_bytes_for(g, positions) || tail_bytes != r.left())
    return Status::errorf("snapshot of ", positions, " positions: expected a tail of ", tail_bytes_for(g, positions),
                          " bytes, found ", tail_bytes, " (", r.left(), " bytes left in the payload)");
  if (record.exact && positions % kSnapshotGrid != 0)
    return Status::errorf("exact snapshot of ", positions, " positions: expected a multiple of ", kSnapshotGrid);
  record.tail.resize(tail_bytes);
  r.raw(record.tail.data(), tail_bytes);
  DS_TRY(check_tokens(record.prefix, vocab_size));
  const uint64_t key = family_key(prefix_keys(record.prefix, g.identity()).back(),
                                  record.exact ? KeyFamily::exact : KeyFamily::decoded);
  if (key != record.key)
    return Status::errorf("snapshot key ", hex(record.key), " is not the key of its ", positions, " tokens (expected ",
                          hex(key), ")");
  for (size_t i = 0; i < record.state.size(); ++i)
    if (!std::isfinite(record.state[i]))
      return Status::errorf("snapshot state float ", i, ": expected a finite value, found ", record.state[i]);
  return record;
}

}  // namespace

const char* prefix_store_engine_version() { return DELTASERVE_VERSION; }

uint64_t kv_block_payload_bytes(const CacheGeometry& g) {
  return sizeof(uint64_t) + static_cast<uint64_t>(g.block_size) * sizeof(int32_t) + g.block_bytes();
}

uint64_t snapshot_state_floats(const CacheGeometry& g) { return g.slot_bytes() / sizeof(float); }

uint64_t tail_bytes_for(const CacheGeometry& g, uint64_t positions) {
  return positions % static_cast<uint64_t>(g.block_size) != 0 ? g.block_bytes() : 0;
}

std::vector<std::byte> encode_record(const StoreIdentity& identity, const KvBlockRecord& record) {
  std::vector<std::byte> file;
  encode_record(identity, record, file);
  return file;
}

std::vector<std::byte> encode_record(const StoreIdentity& identity, const SnapshotRecord& record) {
  std::vector<std::byte> file;
  encode_record(identity, record, file);
  return file;
}

void encode_record(const StoreIdentity& identity, const KvBlockRecord& record, std::vector<std::byte>& file) {
  FileWriter w(file, sizeof(uint64_t) + record.tokens.size() * sizeof(int32_t) + record.kv.size());
  w.put<uint64_t>(record.key);
  w.raw(record.tokens.data(), record.tokens.size() * sizeof(int32_t));
  w.raw(record.kv.data(), record.kv.size());
  w.finish(identity, RecordKind::kv_block);
}

void encode_record(const StoreIdentity& identity, const SnapshotRecord& record, std::vector<std::byte>& file) {
  FileWriter w(file, 32 + record.prefix.size() * sizeof(int32_t) + record.state.size() * sizeof(float) + record.tail.size());
  w.put<uint64_t>(record.key);
  w.put<uint64_t>(record.prefix.size());
  w.raw(record.prefix.data(), record.prefix.size() * sizeof(int32_t));
  w.raw(record.state.data(), record.state.size() * sizeof(float));
  const uint8_t flags[8] = {static_cast<uint8_t>(record.exact ? 1 : 0)};
  w.raw(flags, sizeof(flags));
  w.put<uint64_t>(record.tail.size());
  w.raw(record.tail.data(), record.tail.size());
  w.finish(identity, RecordKind::snapshot);
}

Result<RecordKind> decode_header(std::span<const std::byte> file, const StoreIdentity& identity) {
  if (file.size() < kPrefixStoreHeaderBytes)
    return Status::errorf("expected at least the ", kPrefixStoreHeaderBytes, "-byte header, found a file of ", file.size(), " bytes");
  Reader r(file);
  char magic[8];
  uint32_t format = 0, kind = 0;
  char version[kVersionBytes];
  uint64_t geometry = 0, model = 0;
  r.raw(magic, sizeof(magic));
  r.get(format);
  r.get(kind);
  r.raw(version, kVersionBytes);
  r.get(geometry);
  r.get(model);
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0)
    return Status::error("not a prefix-cache file: expected the magic \"dsprefix\", found other bytes");
  if (format != kPrefixStoreFormat) return Status::errorf("format version ", format, ", expected ", kPrefixStoreFormat);
  // All 16 bytes, padding included: a changed byte anywhere in the header is a mismatch.
  char expected[kVersionBytes] = {};
  std::memcpy(expected, identity.engine_version.data(), std::min(identity.engine_version.size(), kVersionBytes - 1));
  if (std::memcmp(version, expected, kVersionBytes) != 0) {
    version[kVersionBytes - 1] = '\0';
    return Status::errorf("written by deltaserve \"", version, "\", expected \"", identity.engine_version, "\"");
  }
  if (geometry != identity.geometry)
    return Status::errorf("cache geometry ", hex(geometry), ", expected ", hex(identity.geometry),
                          " (another model shape or KV dtype)");
  if (model != identity.model)
    return Status::errorf("model identity ", hex(model), ", expected ", hex(identity.model),
                          " (another checkpoint, weight format or compute mode)");
  if (kind != static_cast<uint32_t>(RecordKind::kv_block) && kind != static_cast<uint32_t>(RecordKind::snapshot))
    return Status::errorf("record kind ", kind, ", expected 1 (KV block) or 2 (snapshot)");
  return static_cast<RecordKind>(kind);
}

Result<StoreRecord> decode_record(std::span<const std::byte> file, const StoreIdentity& identity,
                                  const CacheGeometry& geometry, int64_t vocab_size) {
  DS_ASSIGN_OR_RETURN(const RecordKind kind, decode_header(file, identity));
  Reader r(file.subspan(kPrefixStoreHeaderBytes - 16));
  uint64_t payload_bytes = 0, checksum = 0;
  r.get(payload_bytes);
  r.get(checksum);
  const uint64_t found = file.size() - kPrefixStoreHeaderBytes;
  if (payload_bytes != found)
    return Status::errorf("expected ", payload_bytes, " payload bytes (the header's count), found ", found,
                          " (truncated or appended to)");
  if (kind == RecordKind::kv_block && payload_bytes != kv_block_payload_bytes(geometry))
    return Status::errorf(kind_name(static_cast<uint32_t>(kind)), " payload of ", payload_bytes, " bytes, expected ",
                          kv_block_payload_bytes(geometry), " for this geometry");
  const auto payload = file.subspan(kPrefixStoreHeaderBytes);
  if (const uint64_t sum = checksum64(payload); sum != checksum)
    return Status::errorf("payload checksum ", hex(sum), ", expected ", hex(checksum), " (corrupt)");
  Reader p(payload);
  if (kind == RecordKind::kv_block) {
    DS_ASSIGN_OR_RETURN(KvBlockRecord block, decode_kv_block(p, geometry, vocab_size));
    return StoreRecord(std::move(block));
  }
  DS_ASSIGN_OR_RETURN(SnapshotRecord snapshot, decode_snapshot(p, geometry, vocab_size));
  return StoreRecord(std::move(snapshot));
}

}  // namespace ds
