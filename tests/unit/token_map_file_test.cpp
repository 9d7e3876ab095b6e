// Token map files (--speculative-token-map): text in its forms and .npy arrays as NumPy writes them
// are read in file order; every bad file is an error naming the file, what was expected and what was
// found.
#include "io/token_map_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace ds::token_map_file_test {
namespace {

constexpr int64_t kVocab = 1000;

Result<std::vector<int32_t>> parse(const std::string& bytes) { return parse_token_map(bytes, "hot.txt", kVocab); }

// A .npy file as numpy.save writes it: magic, version, header length, a dict literal padded with
// spaces to a multiple of 64 bytes and ended by '\n', then the values.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data, int version = 1) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t prefix = version == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const auto length = static_cast<uint32_t>(header.size());
  out.append(reinterpret_cast<const char*>(&length), version == 1 ? 2 : 4);  // little-endian hosts
  return out + header + data;
}
template <typename T>
std::string values(std::initializer_list<T> list) {
  std::string out;
  for (T v : list) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

TEST(TokenMapFile, TextFormsGiveTheIdsInFileOrder) {
  const std::vector<int32_t> expected = {17, 3, 999, 0, 42};
  for (const char* text : {"17\n3\n999\n0\n42\n",                                // one per line
                           "17 3 999\n\t0   42",                               // whitespace separated, no final newline
                           "# hot tokens, most frequent first\n17 5000\n3 4000  # a comment\n\n999 12\r\n0 7\n42 0.5\n",  // id count
                           "17\n3 999 0\n42\n"}) {                             // lines of 1 and 3 fields: all ids
    auto ids = parse(text);
    ASSERT_TRUE(ids.ok()) << text << ": " << ids.status().message();
    EXPECT_EQ(*ids, expected) << text;
  }
}

TEST(TokenMapFile, NpyArraysOfInt32AndInt64) {
  const std::vector<int32_t> expected = {5, 999, 0, 123};
  for (const std::string& file : {npy("<i4", "(4,)", values<int32_t>({5, 999, 0, 123})),
                                  npy("<i8", "(4,)", values<int64_t>({5, 999, 0, 123})),
                                  npy("<i8", "(4,)", values<int64_t>({5, 999, 0, 123}), 2)}) {
    auto ids = parse(file);
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    EXPECT_EQ(*ids, expected);
  }
}

TEST(TokenMapFile, ReadsAFile) {
  test::TempDir tmp;
  std::ofstream(tmp / "hot.npy", std::ios::binary) << npy("<i4", "(2,)", values<int32_t>({7, 8}));
  auto ids = read_token_map(tmp / "hot.npy", kVocab);
  ASSERT_TRUE(ids.ok()) << ids.status().message();
  EXPECT_EQ(*ids, (std::vector<int32_t>{7, 8}));
  EXPECT_ERROR_CONTAINS(read_token_map(tmp / "missing.txt", kVocab), "missing.txt: cannot open it (No such file");
}

TEST(TokenMapFile, BadTextIsAnErrorThatSaysWhatAndWhere) {
  EXPECT_ERROR_CONTAINS(parse("1\n2\n1000\n"), "token map hot.txt: token id 1000 (line 3) is out of range: expected 0 .. 999");
  EXPECT_ERROR_CONTAINS(parse("1\n-4\n"), "token id -4 (line 2) is out of range");
  EXPECT_ERROR_CONTAINS(parse("5 10\n6 9\n5 8\n"), "token id 5 appears twice (line 1 and line 3): expected each id once");
  EXPECT_ERROR_CONTAINS(parse(""), "token map hot.txt: expected at least one token id, found none");
  EXPECT_ERROR_CONTAINS(parse("# nothing but a comment\n\n"), "expected at least one token id, found none");
  EXPECT_ERROR_CONTAINS(parse("1\n2.5\n"), "expected an integer token id, found \"2.5\" (line 2)");
  EXPECT_ERROR_CONTAINS(parse("1 2 three\n"), "found \"three\" (line 1)");
  EXPECT_ERROR_CONTAINS(parse("99999999999999999999\n"), "found \"99999999999999999999\" (line 1)");
}

TEST(TokenMapFile, BadNpyIsAnErrorThatSaysWhatAndWhere) {
  const std::string what = "token map hot.txt (a .npy file): ";
  EXPECT_ERROR_CONTAINS(parse(npy("<f4", "(2,)", values<float>({1, 2}))),
                        what + "expected dtype int32 or int64, little-endian ('<i4' or '<i8'), found '<f4'");
  EXPECT_ERROR_CONTAINS(parse(npy(">i4", "(1,)", values<int32_t>({1}))), "found '>i4'");
  EXPECT_ERROR_CONTAINS(parse(npy("<i4", "(2, 2)", values<int32_t>({1, 2, 3, 4}))),
                        what + "expected a 1-D array, shape (n,), found shape (2, 2)");
  EXPECT_ERROR_CONTAINS(parse(npy("<i4", "()", values<int32_t>({1}))), "found shape ()");
  EXPECT_ERROR_CONTAINS(parse(npy("<i8", "(3,)", values<int64_t>({1, 2}))),
                        what + "truncated: its header says 3 int64 values (24 bytes), found 16 bytes of data");
  EXPECT_ERROR_CONTAINS(parse(npy("<i4", "(1,)", values<int32_t>({1, 2}))), "trailing bytes: its header says 1 int32");
  EXPECT_ERROR_CONTAINS(parse(npy("<i4", "(1,)", "").substr(0, 30)), what + "truncated: its header of");
  EXPECT_ERROR_CONTAINS(parse(std::string("\x93NUMPY\x01", 7)), what + "truncated: expected a header, found 7 bytes");
  EXPECT_ERROR_CONTAINS(parse(npy("<i4", "(2,)", values<int32_t>({3, 1000}))), "token id 1000 (element 1) is out of range");
  EXPECT_ERROR_CONTAINS(parse(npy("<i8", "(3,)", values<int64_t>({3, 4, 3}))),
                        "token id 3 appears twice (element 0 and element 2)");
  EXPECT_ERROR_CONTAINS(parse(npy("<i8", "(1,)", values<int64_t>({int64_t{1} << 40}))), "token id 1099511627776 (element 0)");
  EXPECT_ERROR_CONTAINS(parse(npy("<i4", "(0,)", "")), "expected at least one token id, found none");
}

// What `token-map` writes reads back as the ids in order, its comment lines and counts ignored; a
// directory that is not there is an error and leaves nothing behind.
TEST(TokenMapFile, WrittenMapReadsBack) {
  test::TempDir tmp;
  const std::vector<int32_t> ids{198, 220, 11, 5, 999, 0};
  const std::vector<uint64_t> counts{384455, 134429, 99393, 7, 0, 0};
  ASSERT_TRUE(write_token_map(tmp / "map.txt", ids, counts, "made by a test\nsecond line").ok());
  const std::string text = test::read_file(tmp / "map.txt");
  EXPECT_EQ(text.substr(0, 42), "# made by a test\n# second line\n198 384455\n");
  auto back = read_token_map(tmp / "map.txt", kVocab);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, ids);
  EXPECT_FALSE(std::filesystem::exists(tmp / "map.txt.partial"));
  const Status failed = write_token_map(tmp / "no/such/dir/map.txt", ids, counts, "");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("cannot write"), std::string::npos) << failed.message();
  EXPECT_FALSE(std::filesystem::exists(tmp / "no/such/dir/map.txt.partial"));
}

}  // namespace
}  // namespace ds::token_map_file_test
