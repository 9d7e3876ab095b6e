// libFuzzer target: the WebP (libwebp's demuxer and animation decoder) decoder of src/vision on untrusted bytes (image_decode_fuzz.h).
#include "image_decode_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ds::fuzz::decode_image_input(ds::image_decoders::decode_webp, data, size);
}
