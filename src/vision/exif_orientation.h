// EXIF orientation (tag 0x0112): how a camera says its stored pixels must be turned to be upright.
// HF's `load_image` applies it (PIL's `ImageOps.exif_transpose`) before preprocessing, so a decoder
// reads the tag from the file's EXIF block and the pixels are turned here, once, for every format.
#pragma once

#include <cstdint>
#include <span>

#include "vision/rgb_image.h"

namespace ds {

// The orientation value 1..8 stored in a TIFF-structured EXIF block (the payload after JPEG APP1's
// "Exif\0\0", or a PNG eXIf / WebP EXIF chunk as is). 1 (upright) when the block is malformed, has
// no orientation tag or holds a value outside 1..8 — PIL ignores such tags too, and a broken EXIF
// block never makes an image unusable.
int exif_orientation(std::span<const uint8_t> tiff);

// Turns `image` upright for `orientation` (PIL's transpose per value: 2 mirror left-right, 3 rotate
// 180°, 4 mirror top-bottom, 5 transpose, 6 rotate 270° (90° clockwise), 7 transverse, 8 rotate 90°
// counter-clockwise). 1 and anything outside 2..8 leave it unchanged.
RgbImage apply_exif_orientation(RgbImage image, int orientation);

}  // namespace ds
