// Hub ids resolved offline from a Hugging Face cache laid out as huggingface_hub writes it:
// models--org--name/refs/main naming a commit, snapshots/<commit>/ holding the files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "io/hub_cache.h"
#include "test_util.h"

namespace ds {
namespace {
namespace fs = std::filesystem;

TEST(HubCache, WhatLooksLikeAnId) {
  for (const char* id : {"Qwen/Qwen3.5-2B", "unsloth/Qwen3.5-27B-GGUF", "a/b", "org_1/name.v2"}) EXPECT_TRUE(looks_like_hub_id(id)) << id;
  for (const char* not_id : {"Qwen3.5-2B", "/models/x", "./x/y", "models/qwen/x", "a/", "/a", "a/.b", "a b/c", ""})
    EXPECT_FALSE(looks_like_hub_id(not_id)) << not_id;
}

TEST(HubCache, TheCacheDirectoryFollowsTheEnvironmentAsHuggingFaceHubDoes) {
  const std::string saved_cache = std::getenv("HF_HUB_CACHE") ? std::getenv("HF_HUB_CACHE") : "";
  const std::string saved_home = std::getenv("HF_HOME") ? std::getenv("HF_HOME") : "";
  setenv("HF_HUB_CACHE", "/c", 1);
  setenv("HF_HOME", "/h", 1);
  EXPECT_EQ(hub_cache_dir(), "/c");
  unsetenv("HF_HUB_CACHE");
  EXPECT_EQ(hub_cache_dir(), "/h/hub");
  unsetenv("HF_HOME");
  EXPECT_NE(hub_cache_dir().find("huggingface/hub"), std::string::npos);
  if (!saved_cache.empty()) setenv("HF_HUB_CACHE", saved_cache.c_str(), 1);
  if (!saved_home.empty()) setenv("HF_HOME", saved_home.c_str(), 1);
}

TEST(HubCache, ResolvesTheRevisionsSnapshotAndSaysWhyItCannot) {
  const test::TempDir tmp;
  const fs::path cache = tmp.path();
  const fs::path repo = cache / "models--Qwen--Qwen3.5-2B";
  fs::create_directories(repo / "snapshots" / "abc123");
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << "abc123";
  auto found = resolve_hub_model("Qwen/Qwen3.5-2B", cache.string());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, (repo / "snapshots" / "abc123").string());

  auto missing = resolve_hub_model("Qwen/Qwen3.5-9B", cache.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("models--Qwen--Qwen3.5-9B does not exist"), std::string::npos) << missing.status().message();
  EXPECT_NE(missing.status().message().find("huggingface-cli download Qwen/Qwen3.5-9B"), std::string::npos);

  auto revision = resolve_hub_model("Qwen/Qwen3.5-2B", cache.string(), "v2");  // no refs/v2, one snapshot: that one
  ASSERT_TRUE(revision.ok());
  fs::create_directories(repo / "snapshots" / "def456");
  auto ambiguous = resolve_hub_model("Qwen/Qwen3.5-2B", cache.string(), "v2");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.status().message().find("holds 2 snapshots"), std::string::npos) << ambiguous.status().message();

  std::ofstream(repo / "refs" / "main") << "0000";  // a ref to a snapshot that is not there
  auto broken = resolve_hub_model("Qwen/Qwen3.5-2B", cache.string());
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("commit 0000"), std::string::npos) << broken.status().message();

  // A path that exists is a path, whatever it looks like; anything else that is no id passes through.
  EXPECT_EQ(*resolve_model_argument(cache.string()), cache.string());
  EXPECT_EQ(*resolve_model_argument("no-such-dir"), "no-such-dir");
}

}  // namespace
}  // namespace ds
