// JPEG through libjpeg-turbo's libjpeg API (image_decoders.h; docs/vision.md). The decode settings
// are libjpeg's defaults, which are PIL's: the accurate integer IDCT (JDCT_ISLOW) and fancy
// upsampling; grey and YCbCr become RGB in the library. CMYK / YCCK files are refused by name.
// libjpeg reports errors by longjmp: everything that must survive one lives in JpegSession, which
// is set up before the setjmp and outlives it; no C++ object is created between setjmp and longjmp.
#include <csetjmp>
#include <cstddef>
#include <cstdio>  // before jpeglib.h, which uses size_t and FILE without including them
#include <cstring>

#include <jerror.h>
#include <jpeglib.h>

#include "vision/image_decoders.h"

namespace ds::image_decoders {
namespace {

// A progressive file may hold any number of scans, each a full pass over the coefficients; a few
// hundred bytes of crafted scans then cost minutes. libjpeg-turbo's TurboJPEG API stops at 500 with
// TJFLAG_LIMITSCANS; the same bound here.
constexpr int kMaxScans = 500;
constexpr int kExifMarker = JPEG_APP0 + 1;

struct JpegSession {
  jpeg_decompress_struct cinfo{};
  jpeg_error_mgr error_manager{};
  jpeg_progress_mgr progress{};
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX] = {};
  bool truncated = false;
  bool too_many_scans = false;
};

JpegSession* session_of(j_common_ptr cinfo) {
  // cinfo is the first member, so the session starts at the same address.
  return reinterpret_cast<JpegSession*>(cinfo);
}

[[noreturn]] void on_error(j_common_ptr cinfo) {
  JpegSession* session = session_of(cinfo);
  cinfo->err->format_message(cinfo, session->message);
  std::longjmp(session->jump, 1);
}

// Warnings (level −1) are collected, not printed; a file that ends early is an error, as in PIL.
void on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) session_of(cinfo)->truncated = true;
}

void on_progress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->inputctl != nullptr && d->input_scan_number > kMaxScans) {
    session_of(cinfo)->too_many_scans = true;
    std::snprintf(session_of(cinfo)->message, JMSG_LENGTH_MAX, "more than %d scans", kMaxScans);
    std::longjmp(session_of(cinfo)->jump, 1);
  }
}

// The first APP1 block that starts with "Exif\0\0" (PIL keeps the first one).
int saved_orientation(const jpeg_decompress_struct& cinfo) {
  for (jpeg_saved_marker_ptr m = cinfo.marker_list; m != nullptr; m = m->next)
    if (m->marker == kExifMarker && m->data_length >= 6 && std::memcmp(m->data, "Exif\0\0", 6) == 0)
      return orientation_of_exif_block({m->data, m->data_length});
  return 1;
}

// The libjpeg part: fills `image` (already holding the header's size once `sized` is set).
// Returns false after a libjpeg error; session.message says which.
bool run_decoder(JpegSession& session, std::span<const uint8_t> bytes, const ImageLimits& limits, Decoded& out,
                 Status& refusal) {
  jpeg_decompress_struct& cinfo = session.cinfo;
  cinfo.err = jpeg_std_error(&session.error_manager);
  session.error_manager.error_exit = on_error;
  session.error_manager.emit_message = on_message;
  session.progress.progress_monitor = on_progress;
  if (setjmp(session.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &session.progress;
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_save_markers(&cinfo, kExifMarker, 0xFFFF);
  jpeg_read_header(&cinfo, TRUE);
  refusal = check_image_size(ImageFormat::jpeg, cinfo.image_width, cinfo.image_height, limits);
  if (refusal.ok() && (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK))
    refusal = Status::errorf("JPEG image: expected greyscale, YCbCr or RGB colour, found ",
                             cinfo.jpeg_color_space == JCS_CMYK ? "CMYK" : "YCCK", " (convert it to RGB first)");
  if (!refusal.ok()) {
    jpeg_destroy_decompress(&cinfo);
    return true;
  }
  out.orientation = saved_orientation(cinfo);
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  RgbImage& image = out.image;
  image.height = cinfo.output_height;
  image.width = cinfo.output_width;
  image.pixels.resize(static_cast<size_t>(image.height * image.width * 3));
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = image.row(cinfo.output_scanline);
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

}  // namespace

Result<Decoded> decode_jpeg(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  JpegSession session;
  Decoded out;
  Status refusal;
  if (!run_decoder(session, bytes, limits, out, refusal))
    return Status::errorf("JPEG image: ", session.too_many_scans ? "expected at most 500 scans, found " : "",
                          session.message);
  DS_TRY(refusal);
  if (session.truncated) return Status::errorf("JPEG image: the data ends before the image does (truncated file)");
  return out;
}

}  // namespace ds::image_decoders
