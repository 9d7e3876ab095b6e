#include "jpeg_encode.h"

#include <csetjmp>
#include <cstddef>
#include <cstdio>  // before jpeglib.h, which uses size_t and FILE without including them
#include <cstdlib>

#include <jpeglib.h>

namespace ds::app {
namespace {

// libjpeg reports errors by longjmp: everything that must survive one lives here, set up before the
// setjmp; no C++ object is created between setjmp and longjmp.
struct JpegEncodeSession {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr error_manager{};
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX] = {};
  unsigned char* out = nullptr;  // malloc'd by jpeg_mem_dest
  unsigned long out_size = 0;
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  // cinfo is the first member, so the session starts at the same address.
  auto* session = reinterpret_cast<JpegEncodeSession*>(cinfo);
  (*cinfo->err->format_message)(cinfo, session->message);
  std::longjmp(session->jump, 1);
}

}  // namespace

Result<std::vector<uint8_t>> encode_jpeg(const RgbImage& image, int quality) {
  if (image.width <= 0 || image.height <= 0 || image.width > JPEG_MAX_DIMENSION || image.height > JPEG_MAX_DIMENSION)
    return Status::errorf("JPEG encoding: expected sides 1..", JPEG_MAX_DIMENSION, ", found ", image.width, " x ",
                          image.height);
  JpegEncodeSession session;
  session.cinfo.err = jpeg_std_error(&session.error_manager);
  session.error_manager.error_exit = on_error;
  if (setjmp(session.jump) != 0) {
    jpeg_destroy_compress(&session.cinfo);
    std::free(session.out);
    return Status::errorf("JPEG encoding failed: ", session.message);
  }
  jpeg_create_compress(&session.cinfo);
  jpeg_mem_dest(&session.cinfo, &session.out, &session.out_size);
  session.cinfo.image_width = static_cast<JDIMENSION>(image.width);
  session.cinfo.image_height = static_cast<JDIMENSION>(image.height);
  session.cinfo.input_components = 3;
  session.cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&session.cinfo);
  jpeg_set_quality(&session.cinfo, quality, TRUE);
  jpeg_start_compress(&session.cinfo, TRUE);
  while (session.cinfo.next_scanline < session.cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.row(session.cinfo.next_scanline));
    jpeg_write_scanlines(&session.cinfo, &row, 1);
  }
  jpeg_finish_compress(&session.cinfo);
  std::vector<uint8_t> bytes(session.out, session.out + session.out_size);
  jpeg_destroy_compress(&session.cinfo);
  std::free(session.out);
  return bytes;
}

}  // namespace ds::app
