// Access to tests/fixtures/vision (tools/reference/make_vision_fixtures.py): the image files and the
// tensors HF recorded for them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/safetensors_checkpoint.h"
#include "test_util.h"

namespace ds::test {

inline const std::filesystem::path kVisionFixture = std::filesystem::path(DS_FIXTURES_DIR) / "vision";

// The images of the preprocessing and tower cases, in the fixture's order.
inline const std::vector<std::string> kVisionImages = {
    "rgb_64x96.png",   "rgba_120x160.png",     "up_30x40.jpg",         "gray_80x112.png",
    "exif6_48x80.jpg", "palette_70x90.gif", "lossless_60x100.webp", "lossy_64x64.webp"};

inline std::vector<uint8_t> read_image_file(const std::string& name) {
  const std::string bytes = read_file((kVisionFixture / "images" / name).string());
  return {bytes.begin(), bytes.end()};
}

class VisionReference {
 public:
  VisionReference() {
    auto file = SafetensorsCheckpoint::open_file((kVisionFixture / "vision_reference.safetensors").string());
    if (!file.ok()) ADD_FAILURE() << file.status().message();
    else file_ = std::make_unique<SafetensorsCheckpoint>(std::move(*file));
  }
  bool has(const std::string& name) const { return file_ && file_->contains(name); }
  const TensorView& view(const std::string& name) const {
    const TensorView* v = file_ ? file_->find(name) : nullptr;
    if (v == nullptr) {
      ADD_FAILURE() << "fixture tensor " << name << " is missing";
      static const TensorView kEmpty;
      return kEmpty;
    }
    return *v;
  }
  template <typename T>
  std::vector<T> values(const std::string& name) const {
    const TensorView& v = view(name);
    std::vector<T> out(v.nbytes / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), v.data, v.nbytes);
    return out;
  }
  std::vector<int64_t> shape(const std::string& name) const { return view(name).shape; }
  // An FNV-1a 64 recorded as one I64, as 16 hex digits (test_util.h's fnv1a64 format).
  std::string hash(const std::string& name) const {
    const std::vector<int64_t> v = values<int64_t>(name);
    char text[17] = {};
    if (!v.empty()) std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v[0]));
    return text;
  }

 private:
  std::unique_ptr<SafetensorsCheckpoint> file_;
};

}  // namespace ds::test
