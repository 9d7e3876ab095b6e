// Checkpoint directories: single file, sharded index, and index/shard disagreements.
#include "io/safetensors_checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "micro_checkpoint.h"
#include "test_util.h"

namespace ds {
namespace {

namespace fs = std::filesystem;

class ShardedCheckpoint : public ::testing::Test {
 protected:
  test::TempDir tmp_;
  std::string dir_ = tmp_ / "sharded";
  void SetUp() override {
    RandomCheckpointOptions writer;
    writer.max_shard_bytes = 40'000;  // several shards for a ~130 KB micro checkpoint
    test::write_micro_checkpoint(dir_, {}, writer);
  }
  nlohmann::json index() const { return nlohmann::json::parse(test::read_file((fs::path(dir_) / "model.safetensors.index.json").string())); }
  void write_index(const nlohmann::json& index) const {
    test::write_file((fs::path(dir_) / "model.safetensors.index.json").string(), index.dump());
  }
};

TEST_F(ShardedCheckpoint, OpensAllShardsThroughTheIndex) {
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "model.safetensors"));
  auto checkpoint = SafetensorsCheckpoint::open_dir(dir_);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  EXPECT_GT(checkpoint->files().size(), 2u);
  EXPECT_EQ(checkpoint->tensors().size(), index()["weight_map"].size());
  EXPECT_EQ(checkpoint->total_bytes(), index()["metadata"]["total_size"].get<uint64_t>());
  auto view = checkpoint->take("model.language_model.embed_tokens.weight");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->nbytes, 512u * 64u * 2u);
}

TEST_F(ShardedCheckpoint, IndexNamingATensorTheShardLacksIsAnError) {
  auto idx = index();
  idx["weight_map"]["model.language_model.ghost.weight"] = idx["weight_map"].begin().value();
  write_index(idx);
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(dir_), "names tensor \"model.language_model.ghost.weight\"");
}

TEST_F(ShardedCheckpoint, ShardTensorMissingFromIndexIsAnError) {
  auto idx = index();
  idx["weight_map"].erase("model.language_model.norm.weight");
  write_index(idx);
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(dir_),
                        "contains tensor \"model.language_model.norm.weight\", which model.safetensors.index.json does not list");
}

TEST_F(ShardedCheckpoint, RejectsPathsOutsideTheDirectory) {
  auto idx = index();
  idx["weight_map"]["model.language_model.norm.weight"] = "../model.safetensors";
  write_index(idx);
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(dir_), "is not a plain file name");
}

TEST_F(ShardedCheckpoint, RejectsMalformedIndex) {
  test::write_file((fs::path(dir_) / "model.safetensors.index.json").string(), "{\"weight_map\": 3}");
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(dir_), "expected an object with a \"weight_map\" object");
  test::write_file((fs::path(dir_) / "model.safetensors.index.json").string(), "{");
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(dir_), "not valid JSON");
}

TEST_F(ShardedCheckpoint, MissingShardFileIsAnError) {
  fs::remove(fs::path(dir_) / index()["weight_map"].begin().value().get<std::string>());
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(dir_), "cannot open");
}

TEST(SafetensorsCheckpoint, TruncatedFileIsAnErrorNotACrash) {
  test::TempDir tmp;
  const std::string dir = tmp / "m";
  test::write_micro_checkpoint(dir, {});
  const fs::path file = fs::path(dir) / "model.safetensors";
  fs::resize_file(file, fs::file_size(file) - 100);
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(dir), "truncated file?");
}

TEST(SafetensorsCheckpoint, TensorInTwoShardsIsAnError) {
  test::TempDir tmp;
  const std::string dir = tmp / "m";
  test::write_micro_checkpoint(dir, {});
  fs::copy_file(fs::path(dir) / "model.safetensors", fs::path(dir) / "copy.safetensors");
  auto checkpoint = SafetensorsCheckpoint::open_dir(dir);
  ASSERT_TRUE(checkpoint.ok());
  nlohmann::json index = {{"weight_map", nlohmann::json::object()}};
  bool first = true;
  for (const auto& [name, _] : checkpoint->tensors()) {
    index["weight_map"][name] = first ? "copy.safetensors" : "model.safetensors";
    first = false;
  }
  test::write_file((fs::path(dir) / "model.safetensors.index.json").string(), index.dump());
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(dir), "appears in both");
}

TEST(SafetensorsCheckpoint, NoWeightsIsAnError) {
  test::TempDir tmp;
  EXPECT_ERROR_CONTAINS(SafetensorsCheckpoint::open_dir(tmp.path().string()),
                        "expected model.safetensors or model.safetensors.index.json");
}

}  // namespace
}  // namespace ds
