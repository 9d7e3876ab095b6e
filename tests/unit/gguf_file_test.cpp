// The GGUF container parser against gguf-py, llama.cpp's own writer and reader: the fixture file
// gguf-py wrote is read exactly as gguf-py reads it (every metadata type, tensor shapes, types and
// offsets; tests/fixtures/gguf/expected.json). Broken files — truncated anywhere, corrupted
// anywhere, or crafted to lie — give an error naming what is wrong, never a crash.
#include "io/gguf_file.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"

namespace ds {
namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

const std::string kFixture = std::string(DS_FIXTURES_DIR) + "/gguf/container.gguf";

TEST(GgufFile, ReadsWhatGgufPyWroteAsGgufPyReadsIt) {
  const std::vector<std::byte> file = bytes_of(test::read_file(kFixture));
  const auto expected = nlohmann::json::parse(test::read_file(std::string(DS_FIXTURES_DIR) + "/gguf/expected.json"));
  const auto gguf = parse_gguf(file, "container.gguf");
  ASSERT_TRUE(gguf.ok()) << gguf.status().message();
  EXPECT_EQ(gguf->version, 3u);
  EXPECT_EQ(gguf->alignment, expected["alignment"].get<uint64_t>());
  EXPECT_EQ(gguf->data_offset, expected["data_offset"].get<uint64_t>());

  ASSERT_EQ(gguf->metadata.size(), expected["metadata"].size());
  for (size_t i = 0; i < gguf->metadata.size(); ++i) {
    const GgufEntry& e = gguf->metadata[i];
    const auto& want = expected["metadata"][i];
    SCOPED_TRACE(want["key"].get<std::string>());
    EXPECT_EQ(e.key, want["key"].get<std::string>());
    EXPECT_EQ(gguf_type_name(e.type), want["type"].get<std::string>());
    EXPECT_EQ(gguf_type_name(e.element_type), want["element_type"].get<std::string>());
    const auto& value = want["value"];
    if (e.type == GgufType::array && e.element_type == GgufType::string) {
      const auto list = e.string_list();
      ASSERT_TRUE(list.ok());
      ASSERT_EQ(list->size(), value.size());
      for (size_t j = 0; j < value.size(); ++j) EXPECT_EQ((*list)[j], value[j].get<std::string>());
    } else if (e.type == GgufType::array && e.element_type == GgufType::float32) {
      EXPECT_EQ(*e.numbers_list(), value.get<std::vector<double>>());
    } else if (e.type == GgufType::array) {
      EXPECT_EQ(*e.integers(), value.get<std::vector<int64_t>>());
    } else if (e.type == GgufType::string) {
      EXPECT_EQ(*e.string(), value.get<std::string>());
    } else if (e.type == GgufType::boolean) {
      EXPECT_EQ(*e.boolean(), value.get<bool>());
    } else if (e.type == GgufType::float32 || e.type == GgufType::float64) {
      EXPECT_EQ(*e.number(), value.get<double>());
    } else {
      EXPECT_EQ(*e.integer(), value.get<int64_t>());
    }
  }

  ASSERT_EQ(gguf->tensors.size(), expected["tensors"].size());
  for (size_t i = 0; i < gguf->tensors.size(); ++i) {
    const GgufTensor& t = gguf->tensors[i];
    const auto& want = expected["tensors"][i];
    SCOPED_TRACE(want["name"].get<std::string>());
    EXPECT_EQ(t.name, want["name"].get<std::string>());
    EXPECT_STREQ(t.type.name, want["type"].get<std::string>().c_str());
    EXPECT_EQ(t.shape, want["shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(t.offset, want["offset"].get<uint64_t>());
    EXPECT_EQ(t.bytes, want["bytes"].get<uint64_t>());
  }
  EXPECT_EQ(gguf->tensor("blk.0.ssm_a")->numel, 5);
  EXPECT_EQ(gguf->tensor("missing"), nullptr);
  ASSERT_NE(gguf->find("test.u8"), nullptr);
  EXPECT_EQ(gguf->find("test.u8")->string().status().message(), "metadata test.u8: expected a string, found uint8");
  EXPECT_EQ(gguf->require("tokenizer.ggml.model").status().message(), "metadata tokenizer.ggml.model is missing");
  EXPECT_EQ(gguf->find("test.strings")->integers().status().message(),
            "metadata test.strings: expected an array of integers, found an array of string");
}

// A file cut anywhere is an error until every tensor's bytes are there (only the last padding may
// be missing); a byte changed anywhere is an error or a consistent file — never a crash (ASan).
TEST(GgufFile, TruncatedOrCorruptedAnywhereIsAnErrorNotACrash) {
  const std::vector<std::byte> file = bytes_of(test::read_file(kFixture));
  const auto whole = parse_gguf(file, "x.gguf");
  ASSERT_TRUE(whole.ok());
  const GgufTensor& last = whole->tensors.back();
  const uint64_t needed = whole->data_offset + last.offset + last.bytes;
  for (size_t n = 0; n < file.size(); ++n) {
    const auto cut = parse_gguf(std::span(file).first(n), "x.gguf");
    EXPECT_EQ(cut.ok(), n >= needed) << "cut at " << n;
    if (!cut.ok()) {
      EXPECT_NE(cut.status().message().find("x.gguf: "), std::string::npos) << cut.status().message();
    }
  }
  int errors = 0;
  for (size_t i = 0; i < whole->data_offset; ++i) {
    for (const uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
      std::vector<std::byte> bad = file;
      bad[i] ^= std::byte{flip};
      const auto parsed = parse_gguf(bad, "x.gguf");
      errors += parsed.ok() ? 0 : 1;
      if (!parsed.ok()) continue;
      for (const GgufTensor& t : parsed->tensors) {
        EXPECT_LE(parsed->data_offset + t.offset + t.bytes, bad.size());
      }
    }
  }
  EXPECT_GT(errors, 0);
}

// A little-endian GGUF writer for files that lie in one specific way.
struct Builder {
  std::vector<std::byte> out;
  Builder& u32(uint32_t v) { return raw(&v, 4); }
  Builder& u64(uint64_t v) { return raw(&v, 8); }
  Builder& str(const std::string& s) { u64(s.size()); return raw(s.data(), s.size()); }
  Builder& raw(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
    return *this;
  }
  Builder& header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) { return raw("GGUF", 4).u32(version).u64(tensors).u64(kvs); }
  Builder& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(4).u32(v); }
  Builder& tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Builder& pad_to(size_t n) { out.resize(n); return *this; }
  std::string error() const {
    const auto parsed = parse_gguf(out, "m.gguf");
    return parsed.ok() ? "parsed" : parsed.status().message();
  }
};

TEST(GgufFile, LiesAreNamed) {
  auto has = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                                   : ::testing::AssertionFailure() << message;
  };
  EXPECT_TRUE(has(Builder().raw("GGML", 4).u32(3).u64(0).u64(0).error(), "not a GGUF file"));
  EXPECT_TRUE(has(Builder().header(0, 0, 1).error(), "GGUF version 1 (2023) is not supported"));
  EXPECT_TRUE(has(Builder().header(0, 0, 0x03000000).error(), "GGUF version 3 in big-endian byte order"));
  EXPECT_TRUE(has(Builder().header(0, 0, 4).error(), "GGUF version 4 is not supported (expected 2 or 3)"));
  EXPECT_TRUE(has(Builder().header(0, uint64_t{1} << 60).error(), "metadata pairs cannot fit in the file"));
  EXPECT_TRUE(has(Builder().header(uint64_t{1} << 60, 0).error(), "tensor infos cannot fit in the file"));
  EXPECT_TRUE(has(Builder().header(0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2).error(), "metadata key a.b appears twice"));
  EXPECT_TRUE(has(Builder().header(0, 1).str("k").u32(13).pad_to(64).error(), "unknown metadata value type 13"));
  EXPECT_TRUE(has(Builder().header(0, 1).str("k").u32(9).u32(9).u64(1).error(), "arrays of arrays are not supported"));
  EXPECT_TRUE(has(Builder().header(0, 1).str("k").u32(9).u32(8).u64(uint64_t{1} << 40).error(), "strings cannot fit"));
  EXPECT_TRUE(has(Builder().header(0, 1).str("k").u32(8).u64(1000).error(), "runs past the end of the file"));
  EXPECT_TRUE(has(Builder().header(0, 1).kv_u32("general.alignment", 48).error(),
                  "general.alignment: expected a power of two, found 48"));
  EXPECT_TRUE(has(Builder().header(1, 0).tensor("w", {32}, 99, 0).pad_to(1000).error(), "tensor w: unknown ggml type 99"));
  EXPECT_TRUE(has(Builder().header(1, 0).tensor("w", {48}, 12, 0).pad_to(1000).error(),
                  "tensor w: its innermost dimension 48 is not a multiple of Q4_K's block of 256"));
  EXPECT_TRUE(has(Builder().header(1, 0).tensor("w", {1, 2, 3, 4, 5}, 0, 0).pad_to(1000).error(),
                  "tensor w: expected 1–4 dimensions, found 5"));
  EXPECT_TRUE(has(Builder().header(1, 0).tensor(std::string(64, 'n'), {1}, 0, 0).pad_to(1000).error(),
                  "expected 1–63 bytes, found 64"));
  EXPECT_TRUE(has(Builder().header(1, 0).tensor("w", {uint64_t{1} << 62, 8}, 0, 0).error(), "overflows the element count"));
  EXPECT_TRUE(has(Builder().header(2, 0).tensor("w", {8}, 0, 0).tensor("w", {8}, 0, 32).pad_to(1000).error(),
                  "tensor w appears twice"));
  EXPECT_TRUE(has(Builder().header(2, 0).tensor("a", {8}, 0, 0).tensor("b", {8}, 0, 0).pad_to(1000).error(),
                  "tensor b starts at data offset 0, expected 32 (where the previous tensor ends, aligned to 32)"));
  EXPECT_TRUE(has(Builder().header(1, 0).tensor("a", {1024}, 0, 0).pad_to(200).error(),
                  "tensor a (4096 bytes at data offset 0) runs past the end of the file"));
  // The infos end at byte 57, so the data starts at 64 and the tensor's 32 bytes end at 96.
  EXPECT_EQ(Builder().header(1, 0).tensor("a", {8}, 0, 0).pad_to(96).error(), "parsed");
  EXPECT_TRUE(has(Builder().header(1, 0).tensor("a", {8}, 0, 0).pad_to(95).error(), "runs past the end of the file"));
}

}  // namespace
}  // namespace ds
