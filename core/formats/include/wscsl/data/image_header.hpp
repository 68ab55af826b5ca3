// What a JPEG or PNG file's headers say, read without decoding a pixel: its size, and whether the
// file is whole. Every image is checked this way before a codec sees it, so that a truncated,
// damaged or bomb-sized file is refused with wscsl's own sentence (a codec would print its own
// complaint, or try to allocate what the header announces).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wscsl {

enum class ImageFormat { jpeg, png };

struct ImageHeader {
  ImageFormat format = ImageFormat::jpeg;
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::string problem;  // empty when the file may be decoded
};

// Refused with a reason: an empty file, another format, a JPEG without its end-of-image marker or
// with a segment running past the end, a PNG without its IEND chunk or with a chunk whose CRC does
// not match its bytes, an empty size, or more than `max_pixels` pixels.
ImageHeader read_image_header(std::string_view bytes, std::int64_t max_pixels);

}  // namespace wscsl
