// GgufWriter round trips through the parser (gguf_file.h): every metadata value type, tensor infos
// and data written in pieces from several threads out of order, a non-default alignment; and the
// writer's refusals (a tensor GGUF cannot hold, an incomplete file).
#include "io/gguf_writer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "test_util.h"
#include "util/mapped_file.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

GgmlTypeInfo type(uint32_t id) { return *ggml_type_info(id); }

GgufMetadata every_type() {
  GgufMetadata m;
  m.set_number<uint8_t>("u8", 200);
  m.set_number<int8_t>("i8", -100);
  m.set_number<uint16_t>("u16", 60000);
  m.set_number<int16_t>("i16", -30000);
  m.set_number<uint32_t>("u32", 4000000000u);
  m.set_number<int32_t>("i32", -2000000000);
  m.set_number<float>("f32", 0.1f);
  m.set_number<bool>("bool", true);
  m.set_string("string", "qwen35 ✓");
  m.set_number<uint64_t>("u64", uint64_t{1} << 62);
  m.set_number<int64_t>("i64", -(int64_t{1} << 62));
  m.set_number<double>("f64", 0.1);
  const int32_t sections[] = {11, 11, 10, 0};
  m.set_array<int32_t>("i32s", sections);
  const bool flags[] = {true, false, true};
  m.set_array<bool>("bools", flags);
  const float floats[] = {1.5f, -2.25f};
  m.set_array<float>("f32s", floats);
  m.set_strings("strings", {"a b", "", "Ġhello"});
  m.set_array<uint8_t>("empty", std::span<const uint8_t>());
  return m;
}

TEST(GgufWriter, MetadataOfEveryTypeReadsBack) {
  test::TempDir tmp;
  auto writer = GgufWriter::create(tmp / "m.gguf", every_type(), {});
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_TRUE(writer->close().ok());
  auto file = MappedFile::open(tmp / "m.gguf");
  ASSERT_TRUE(file.ok());
  auto gguf = parse_gguf(file->bytes(), "m.gguf");
  ASSERT_TRUE(gguf.ok()) << gguf.status().message();
  EXPECT_EQ(gguf->version, 3u);
  ASSERT_EQ(gguf->metadata.size(), every_type().entries().size());
  EXPECT_EQ(gguf->metadata[0].key, "u8");  // in the order set
  EXPECT_EQ(*gguf->find("u8")->integer(), 200);
  EXPECT_EQ(gguf->find("u8")->type, GgufType::uint8);
  EXPECT_EQ(*gguf->find("i8")->integer(), -100);
  EXPECT_EQ(*gguf->find("u16")->integer(), 60000);
  EXPECT_EQ(*gguf->find("i16")->integer(), -30000);
  EXPECT_EQ(*gguf->find("u32")->integer(), 4000000000);
  EXPECT_EQ(*gguf->find("i32")->integer(), -2000000000);
  EXPECT_EQ(*gguf->find("f32")->number(), static_cast<double>(0.1f));
  EXPECT_EQ(*gguf->find("bool")->boolean(), true);
  EXPECT_EQ(*gguf->find("string")->string(), "qwen35 ✓");
  EXPECT_EQ(*gguf->find("u64")->integer(), int64_t{1} << 62);
  EXPECT_EQ(gguf->find("u64")->type, GgufType::uint64);
  EXPECT_EQ(*gguf->find("i64")->integer(), -(int64_t{1} << 62));
  EXPECT_EQ(*gguf->find("f64")->number(), 0.1);
  EXPECT_EQ(*gguf->find("i32s")->integers(), (std::vector<int64_t>{11, 11, 10, 0}));
  EXPECT_EQ(gguf->find("i32s")->element_type, GgufType::int32);
  const GgufEntry* bools = gguf->find("bools");
  ASSERT_EQ(bools->element_type, GgufType::boolean);
  ASSERT_EQ(bools->count, 3u);
  EXPECT_EQ(bools->numbers[0], std::byte{1});
  EXPECT_EQ(bools->numbers[1], std::byte{0});
  EXPECT_EQ(*gguf->find("f32s")->numbers_list(), (std::vector<double>{1.5, -2.25}));
  auto strings = gguf->find("strings")->string_list();
  ASSERT_TRUE(strings.ok());
  EXPECT_EQ(std::vector<std::string_view>(strings->begin(), strings->end()),
            (std::vector<std::string_view>{"a b", "", "Ġhello"}));
  EXPECT_EQ(gguf->find("empty")->count, 0u);
}

TEST(GgufMetadata, ASecondSetReplacesTheValueInItsPlace) {
  GgufMetadata m;
  m.set_string("a", "1");
  m.set_string("b", "2");
  m.set_number<uint32_t>("a", 3);
  ASSERT_EQ(m.entries().size(), 2u);
  EXPECT_EQ(m.entries()[0].first, "a");
  EXPECT_EQ(m.entries()[0].second.type, GgufType::uint32);
}

// Tensors of several types and shapes, their bytes written in pieces, backwards, from two threads.
TEST(GgufWriter, TensorsWrittenInPiecesFromThreadsReadBack) {
  for (uint64_t alignment : {uint64_t{32}, uint64_t{64}}) {
    test::TempDir tmp;
    std::vector<GgufTensorDecl> decls = {
        {"token_embd.weight", {64, 10}, type(30)},  // BF16 [10 rows of 64]
        {"blk.0.ssm_a", {3}, type(0)},               // F32, 12 bytes: the next tensor is padded
        {"blk.0.attn_q.weight", {256, 5}, type(12)},  // Q4_K: 5 rows of one 144-byte block
        {"blk.0.ffn_down.weight", {64, 2}, type(8)},  // Q8_0
    };
    std::vector<std::string> data;
    for (size_t i = 0; i < decls.size(); ++i) {
      const std::vector<float> noise = test::random_floats(decls[i].bytes(), i + 1);
      std::string bytes(decls[i].bytes(), '\0');
      for (size_t b = 0; b < bytes.size(); ++b) bytes[b] = static_cast<char>(noise[b] * 127);
      data.push_back(bytes);
    }
    GgufMetadata m;
    m.set_string("general.architecture", "qwen35");
    auto writer = GgufWriter::create(tmp / "t.gguf", m, decls, alignment);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    EXPECT_FALSE(fs::exists(tmp / "t.gguf"));  // PATH.partial until close
    auto write_backwards = [&](size_t tensor) {
      const std::string& bytes = data[tensor];
      for (size_t end = bytes.size(); end > 0;) {
        const size_t begin = end > 7 ? end - 7 : 0;
        const auto piece = std::as_bytes(std::span(bytes.data() + begin, end - begin));
        EXPECT_TRUE(writer->write(tensor, begin, piece).ok());
        end = begin;
      }
    };
    std::thread other([&] {
      write_backwards(0);
      write_backwards(2);
    });
    write_backwards(1);
    write_backwards(3);
    other.join();
    ASSERT_TRUE(writer->close().ok());
    EXPECT_FALSE(fs::exists(tmp / "t.gguf.partial"));

    auto file = MappedFile::open(tmp / "t.gguf");
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(file->size() % alignment, 0u);
    auto gguf = parse_gguf(file->bytes(), "t.gguf");
    ASSERT_TRUE(gguf.ok()) << gguf.status().message();
    EXPECT_EQ(gguf->alignment, alignment);
    EXPECT_EQ(gguf->find("general.alignment") != nullptr, alignment != 32);
    ASSERT_EQ(gguf->tensors.size(), decls.size());
    for (size_t i = 0; i < decls.size(); ++i) {
      const GgufTensor& t = gguf->tensors[i];
      EXPECT_EQ(t.name, decls[i].name);
      EXPECT_EQ(t.shape, decls[i].shape);
      EXPECT_EQ(t.type.id, decls[i].type.id);
      EXPECT_EQ(t.bytes, decls[i].bytes());
      const std::byte* at = file->bytes().data() + gguf->data_offset + t.offset;
      EXPECT_EQ(std::memcmp(at, data[i].data(), data[i].size()), 0) << t.name;
    }
  }
}

TEST(GgufWriter, RefusesTensorsGgufCannotHold) {
  test::TempDir tmp;
  auto refuse = [&](GgufTensorDecl decl, const std::string& expected) {
    auto writer = GgufWriter::create(tmp / "x.gguf", {}, {decl});
    ASSERT_FALSE(writer.ok()) << decl.name;
    EXPECT_NE(writer.status().message().find(expected), std::string::npos) << writer.status().message();
    EXPECT_FALSE(fs::exists(tmp / "x.gguf.partial"));
  };
  refuse({std::string(64, 'n'), {32}, type(0)}, "expected 1–63 bytes, found 64");
  refuse({"five", {1, 1, 1, 1, 1}, type(0)}, "expected 1–4 dimensions, found 5");
  refuse({"q4k", {128, 2}, type(12)}, "innermost dimension 128 is not a multiple of Q4_K's block of 256");
  auto twice = GgufWriter::create(tmp / "x.gguf", {}, {{"a", {1}, type(0)}, {"a", {1}, type(0)}});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("tensor a is declared twice"), std::string::npos);
}

TEST(GgufWriter, AnIncompleteFileIsNotRenamedAndAnAbandonedOneIsRemoved) {
  test::TempDir tmp;
  {
    auto writer = GgufWriter::create(tmp / "x.gguf", {}, {{"a", {8}, type(0)}});
    ASSERT_TRUE(writer.ok());
    const float half[4] = {};
    ASSERT_TRUE(writer->write(0, 0, std::as_bytes(std::span(half))).ok());
    const Status closed = writer->close();
    ASSERT_FALSE(closed.ok());
    EXPECT_NE(closed.message().find("tensor a: 16 of its 32 bytes were written"), std::string::npos) << closed.message();
    const Status outside = writer->write(0, 24, std::as_bytes(std::span(half)));
    EXPECT_FALSE(outside.ok());
  }
  EXPECT_FALSE(fs::exists(tmp / "x.gguf"));
  EXPECT_FALSE(fs::exists(tmp / "x.gguf.partial"));
}

}  // namespace
}  // namespace ds
