// GIF through giflib: the first frame only, as PIL opens it (image_decoders.h). PIL's canvas is the
// logical screen, enlarged to hold the first frame if it reaches past it, filled with the frame's
// transparent index when its graphic control extension names one and with index 0 otherwise; the
// frame's pixels are the local colour table's, else the global one's; an index past the table (or
// any index when the file has no table) maps to grey (i, i, i), PIL's initial palette. Transparency
// is ignored, as PIL's `convert("RGB")` ignores it.
#include <gif_lib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "vision/image_decoders.h"

namespace ds::image_decoders {
namespace {

struct MemoryReader {
  std::span<const uint8_t> bytes;
  size_t offset = 0;
};

int read_from_memory(GifFileType* gif, GifByteType* out, int size) {
  auto* reader = static_cast<MemoryReader*>(gif->UserData);
  const size_t n = std::min(static_cast<size_t>(size), reader->bytes.size() - reader->offset);
  std::memcpy(out, reader->bytes.data() + reader->offset, n);
  reader->offset += n;
  return static_cast<int>(n);
}

struct GifCloser {
  void operator()(GifFileType* gif) const {
    int error = 0;
    DGifCloseFile(gif, &error);
  }
};

Status gif_error(const char* what, int code) {
  const char* text = GifErrorString(code);
  return Status::errorf("GIF image: ", what, " failed: ", text ? text : "unknown giflib error");
}

// PIL's palette: the table's colours, then grey ramps for every index the table does not cover.
std::array<std::array<uint8_t, 3>, 256> palette_of(const ColorMapObject* table) {
  std::array<std::array<uint8_t, 3>, 256> palette{};
  for (int i = 0; i < 256; ++i) palette[i] = {uint8_t(i), uint8_t(i), uint8_t(i)};
  if (table != nullptr && table->Colors != nullptr)
    for (int i = 0; i < std::min(table->ColorCount, 256); ++i)
      palette[i] = {table->Colors[i].Red, table->Colors[i].Green, table->Colors[i].Blue};
  return palette;
}

}  // namespace

Result<Decoded> decode_gif(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  MemoryReader reader{bytes};
  int error = 0;
  const std::unique_ptr<GifFileType, GifCloser> gif(DGifOpen(&reader, read_from_memory, &error));
  if (!gif) return gif_error("reading the header", error);
  GifFileType* g = gif.get();
  DS_TRY(check_image_size(ImageFormat::gif, g->SWidth, g->SHeight, limits));

  int transparent_index = NO_TRANSPARENT_COLOR;
  for (;;) {
    GifRecordType record = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(g, &record) == GIF_ERROR) return gif_error("reading a record", g->Error);
    if (record == TERMINATE_RECORD_TYPE) return Status::errorf("GIF image: expected at least one frame, found none");
    if (record == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* block = nullptr;  // [length, payload...], owned by giflib
      if (DGifGetExtension(g, &code, &block) == GIF_ERROR) return gif_error("reading an extension", g->Error);
      if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr) {
        GraphicsControlBlock control{};
        if (DGifExtensionToGCB(block[0], block + 1, &control) == GIF_OK) transparent_index = control.TransparentColor;
      }
      while (block != nullptr)
        if (DGifGetExtensionNext(g, &block) == GIF_ERROR) return gif_error("reading an extension", g->Error);
      continue;
    }
    if (record != IMAGE_DESC_RECORD_TYPE) continue;
    if (DGifGetImageDesc(g) == GIF_ERROR) return gif_error("reading the first frame's descriptor", g->Error);
    const GifImageDesc& frame = g->Image;
    DS_TRY(check_image_size(ImageFormat::gif, frame.Width, frame.Height, limits));
    const int64_t canvas_width = std::max<int64_t>(g->SWidth, int64_t{frame.Left} + frame.Width);
    const int64_t canvas_height = std::max<int64_t>(g->SHeight, int64_t{frame.Top} + frame.Height);
    DS_TRY(check_image_size(ImageFormat::gif, canvas_width, canvas_height, limits));

    const auto palette = palette_of(frame.ColorMap != nullptr ? frame.ColorMap : g->SColorMap);
    Decoded out;
    RgbImage& image = out.image;
    image.height = canvas_height;
    image.width = canvas_width;
    image.pixels.resize(static_cast<size_t>(canvas_height * canvas_width * 3));
    const auto& fill = palette[transparent_index >= 0 && transparent_index < 256 ? transparent_index : 0];
    for (int64_t i = 0; i < canvas_height * canvas_width; ++i) std::memcpy(&image.pixels[3 * i], fill.data(), 3);

    std::vector<GifPixelType> line(static_cast<size_t>(frame.Width));  // one row of palette indices
    // Interlaced frames store rows in four passes: every 8th from 0, every 8th from 4, every 4th
    // from 2, every 2nd from 1.
    static constexpr int kPassStart[] = {0, 4, 2, 1}, kPassStep[] = {8, 8, 4, 2};
    const int passes = frame.Interlace ? 4 : 1;
    for (int pass = 0; pass < passes; ++pass) {
      const int start = frame.Interlace ? kPassStart[pass] : 0, step = frame.Interlace ? kPassStep[pass] : 1;
      for (int64_t y = start; y < frame.Height; y += step) {
        if (DGifGetLine(g, line.data(), frame.Width) == GIF_ERROR) return gif_error("decoding the first frame", g->Error);
        uint8_t* row = image.row(frame.Top + y) + 3 * int64_t{frame.Left};
        for (int64_t x = 0; x < frame.Width; ++x) std::memcpy(row + 3 * x, palette[line[x]].data(), 3);
      }
    }
    return out;
  }
}

}  // namespace ds::image_decoders
