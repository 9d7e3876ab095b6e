// libFuzzer target: the GIF (giflib, first frame) decoder of src/vision on untrusted bytes (image_decode_fuzz.h).
#include "image_decode_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ds::fuzz::decode_image_input(ds::image_decoders::decode_gif, data, size);
}
