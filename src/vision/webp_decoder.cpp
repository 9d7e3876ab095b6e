// WebP through libwebp's animation decoder, as PIL reads every WebP file (image_decoders.h): the
// first frame on a canvas that starts transparent black, non-premultiplied RGBA, alpha dropped.
// The container is parsed first (WebPDemux) so the canvas size is checked before any pixel is
// allocated, and the EXIF chunk read.
#include <webp/demux.h>

#include <cstring>
#include <memory>

#include "vision/image_decoders.h"

namespace ds::image_decoders {
namespace {

struct DemuxDeleter {
  void operator()(WebPDemuxer* demux) const { WebPDemuxDelete(demux); }
};
struct AnimDecoderDeleter {
  void operator()(WebPAnimDecoder* decoder) const { WebPAnimDecoderDelete(decoder); }
};

int webp_orientation(const WebPDemuxer* demux) {
  if (!(WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS) & EXIF_FLAG)) return 1;
  WebPChunkIterator chunk{};
  if (!WebPDemuxGetChunk(demux, "EXIF", 1, &chunk)) return 1;
  const int orientation = orientation_of_exif_block({chunk.chunk.bytes, chunk.chunk.size});
  WebPDemuxReleaseChunkIterator(&chunk);
  return orientation;
}

}  // namespace

Result<Decoded> decode_webp(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  const WebPData data{bytes.data(), bytes.size()};
  const std::unique_ptr<WebPDemuxer, DemuxDeleter> demux(WebPDemux(&data));
  if (!demux) return Status::errorf("WebP image: expected a valid WebP container, found a malformed or truncated one");
  DS_TRY(check_image_size(ImageFormat::webp, WebPDemuxGetI(demux.get(), WEBP_FF_CANVAS_WIDTH),
                          WebPDemuxGetI(demux.get(), WEBP_FF_CANVAS_HEIGHT), limits));
  if (WebPDemuxGetI(demux.get(), WEBP_FF_FRAME_COUNT) < 1)
    return Status::errorf("WebP image: expected at least one frame, found none");
  Decoded out;
  out.orientation = webp_orientation(demux.get());

  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) return Status::internal("WebP image: libwebp version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const std::unique_ptr<WebPAnimDecoder, AnimDecoderDeleter> decoder(WebPAnimDecoderNew(&data, &options));
  if (!decoder) return Status::errorf("WebP image: expected a decodable WebP file, found one libwebp cannot parse");
  WebPAnimInfo info{};
  if (!WebPAnimDecoderGetInfo(decoder.get(), &info)) return Status::internal("WebP image: no animation info");
  uint8_t* rgba = nullptr;  // [canvas_height, canvas_width, 4], owned by the decoder
  int timestamp = 0;
  if (!WebPAnimDecoderGetNext(decoder.get(), &rgba, &timestamp))
    return Status::errorf("WebP image: expected a decodable first frame, found corrupt image data");
  RgbImage& image = out.image;
  image.height = info.canvas_height;
  image.width = info.canvas_width;
  const size_t pixels = static_cast<size_t>(image.height) * static_cast<size_t>(image.width);
  image.pixels.resize(pixels * 3);
  for (size_t i = 0; i < pixels; ++i) std::memcpy(&image.pixels[3 * i], rgba + 4 * i, 3);
  return out;
}

}  // namespace ds::image_decoders
