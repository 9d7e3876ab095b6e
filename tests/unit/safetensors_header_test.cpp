// Safetensors header validation: accepted layouts and one clear message per kind of corruption.
#include "io/safetensors_header.h"

#include <gtest/gtest.h>

#include <cstring>

#include "io/safetensors_writer.h"
#include "test_util.h"

namespace ds {
namespace {

// Length prefix + JSON text (as given, no padding) + `data_bytes` zero bytes.
std::string file_with_header(const std::string& json, size_t data_bytes, uint64_t claimed_length = UINT64_MAX) {
  std::string bytes(8, '\0');
  const uint64_t length = claimed_length == UINT64_MAX ? json.size() : claimed_length;
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  return bytes + json + std::string(data_bytes, '\0');
}

Result<SafetensorsHeader> parse(const std::string& bytes) {
  return parse_safetensors_header({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "test.safetensors");
}

TEST(SafetensorsHeader, ParsesWriterOutputWithMetadataAndMixedDtypes) {
  const std::vector<TensorDecl> decls{{"w", DType::BF16, {3, 4}}, {"A_log", DType::F32, {5}}, {"empty", DType::F16, {0, 7}}};
  const std::string header = safetensors_header_bytes(decls, {{"format", "pt"}});
  EXPECT_EQ((header.size() - 8) % 8, 0u) << "header padded to 8 bytes";
  const auto parsed = parse(header + std::string(24 + 20, '\0'));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->metadata.at("format"), "pt");
  ASSERT_EQ(parsed->tensors.size(), 3u);
  EXPECT_EQ(parsed->data_offset, header.size());
  EXPECT_EQ(parsed->tensors[0].name, "w");  // sorted by offset; "empty" has [44, 44)
  EXPECT_EQ(parsed->tensors[0].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(parsed->tensors[1].dtype, DType::F32);
  EXPECT_EQ(parsed->tensors[2].numel(), 0u);
}

TEST(SafetensorsHeader, AcceptsEmptyHeaderAndScalars) {
  EXPECT_TRUE(parse(file_with_header("{}", 0)).ok());
  EXPECT_TRUE(parse(file_with_header(R"({"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]}})", 8)).ok());
}

TEST(SafetensorsHeader, RejectsShortFile) { EXPECT_ERROR_CONTAINS(parse("abc"), "expected at least 8"); }

TEST(SafetensorsHeader, RejectsHeaderLengthPastEnd) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header("{}", 0, 1000)), "runs past the end of the file");
}

TEST(SafetensorsHeader, RejectsHugeHeaderBeforeReadingIt) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header("{}", 0, uint64_t{1} << 40)), "exceeds the limit");
}

TEST(SafetensorsHeader, RejectsInvalidJson) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header("{\"a\": [1, 2", 0)), "not valid JSON");
  EXPECT_ERROR_CONTAINS(parse(file_with_header("[1, 2]", 0)), "does not start with '{'");
}

TEST(SafetensorsHeader, RejectsUnknownDtype) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"t":{"dtype":"Q4_K","shape":[1],"data_offsets":[0,1]}})", 1)),
                        "unknown dtype \"Q4_K\"");
}

TEST(SafetensorsHeader, RejectsShapeThatDisagreesWithByteCount) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)),
                        "need 12 bytes, but data_offsets [0, 8] hold 8");
}

TEST(SafetensorsHeader, RejectsShapeOverflow) {
  EXPECT_ERROR_CONTAINS(
      parse(file_with_header(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8)),
      "more than 2^64");
}

TEST(SafetensorsHeader, RejectsNegativeOrFractionalDimensions) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"t":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", 1)),
                        "expected a non-negative integer");
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"t":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", 1)),
                        "expected a non-negative integer");
}

TEST(SafetensorsHeader, RejectsOverlappingTensors) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},
                                                   "b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})", 6)),
                        "overlaps");
}

TEST(SafetensorsHeader, RejectsGapsAndTrailingBytes) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},
                                                   "b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})", 6)),
                        "gaps are not allowed");
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 5)),
                        "trailing bytes");
}

TEST(SafetensorsHeader, RejectsTensorPastEndOfFile) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"a":{"dtype":"F16","shape":[8],"data_offsets":[0,16]}})", 4)),
                        "truncated file?");
}

TEST(SafetensorsHeader, RejectsMalformedEntries) {
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"a":{"dtype":"U8","shape":[1]}})", 1)), "missing \"data_offsets\"");
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}})", 1)),
                        "unexpected key \"x\"");
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}})", 1)),
                        "is before begin");
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"a":7})", 0)), "expected an object");
  EXPECT_ERROR_CONTAINS(parse(file_with_header(R"({"__metadata__":{"k":1}})", 0)), "__metadata__.k: expected a string");
}

TEST(SafetensorsHeader, ErrorsNameTheFile) {
  EXPECT_ERROR_CONTAINS(parse("abc"), "test.safetensors");
}

}  // namespace
}  // namespace ds
