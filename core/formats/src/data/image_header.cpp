#include "wscsl/data/image_header.hpp"

#include <zlib.h>

#include <fmt/format.h>

namespace wscsl {
namespace {

ImageHeader refused(ImageFormat format, std::string problem) {
  ImageHeader h;
  h.format = format;
  h.problem = std::move(problem);
  return h;
}

std::uint32_t big_endian(std::string_view b, std::size_t at, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | static_cast<std::uint8_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

bool is_jpeg(std::string_view b) {
  return b.size() >= 3 && static_cast<std::uint8_t>(b[0]) == 0xFF &&
         static_cast<std::uint8_t>(b[1]) == 0xD8 && static_cast<std::uint8_t>(b[2]) == 0xFF;
}

bool is_png(std::string_view b) {
  return b.size() >= 8 && b.substr(0, 8) == "\x89PNG\r\n\x1a\n";
}

// Walks the marker segments up to the first scan: the frame header gives the size, and the
// entropy-coded data after the scan must be followed by an end-of-image marker somewhere (inside
// entropy-coded data 0xFF is always followed by 0x00 or a restart marker, so FF D9 is the marker).
ImageHeader jpeg_header(std::string_view b) {
  const auto bad = [](std::string problem) {
    return refused(ImageFormat::jpeg, std::move(problem));
  };
  ImageHeader h;
  h.format = ImageFormat::jpeg;
  std::size_t at = 2;
  bool have_frame = false;
  while (true) {
    while (at < b.size() && static_cast<std::uint8_t>(b[at]) == 0xFF)
      ++at;  // fill bytes before a marker
    if (at >= b.size()) return bad("truncated JPEG (it ends inside its headers)");
    const std::uint8_t marker = static_cast<std::uint8_t>(b[at++]);
    if (marker == 0xD9) return bad("JPEG without image data (end-of-image before any scan)");
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length
    if (at + 2 > b.size()) return bad("truncated JPEG (it ends inside its headers)");
    const std::size_t length = big_endian(b, at, 2);
    if (length < 2 || at + length > b.size())
      return bad("truncated JPEG (a header segment runs past the end of the file)");
    const bool frame =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frame) {
      if (length < 7) return bad("corrupt JPEG frame header");
      h.height = big_endian(b, at + 3, 2);
      h.width = big_endian(b, at + 5, 2);
      have_frame = true;
    }
    if (marker == 0xDA) {
      if (!have_frame) return bad("corrupt JPEG (a scan before the frame header)");
      if (b.find("\xFF\xD9", at + length) == std::string_view::npos)
        return bad("truncated JPEG (no end-of-image marker after the image data)");
      return h;
    }
    at += length;
  }
}

// The IHDR chunk gives the size; the chunks must reach an IEND chunk within the file, each with
// the CRC of its type and data (libpng would otherwise print its own complaint before failing).
ImageHeader png_header(std::string_view b) {
  const auto bad = [](std::string problem) {
    return refused(ImageFormat::png, std::move(problem));
  };
  if (b.size() < 8 + 8 + 13 || b.substr(12, 4) != "IHDR")
    return bad("corrupt PNG (no IHDR chunk after the signature)");
  ImageHeader h;
  h.format = ImageFormat::png;
  h.width = big_endian(b, 16, 4);
  h.height = big_endian(b, 20, 4);
  std::size_t at = 8;
  while (true) {
    if (at + 8 > b.size()) return bad("truncated PNG (no IEND chunk)");
    const std::size_t length = big_endian(b, at, 4);
    if (length > b.size() || at + 12 + length > b.size())
      return bad("truncated PNG (a chunk runs past the end of the file)");
    const std::string_view type = b.substr(at + 4, 4);
    const auto* typed = reinterpret_cast<const Bytef*>(b.data() + at + 4);
    const auto computed = static_cast<std::uint32_t>(
        crc32(crc32(0L, Z_NULL, 0), typed, static_cast<uInt>(4 + length)));
    if (computed != big_endian(b, at + 8 + length, 4))
      return bad(
          fmt::format("corrupt PNG (the CRC of its {} chunk at byte {} does not match)", type, at));
    if (type == "IEND") return h;
    at += 12 + length;
  }
}

}  // namespace

ImageHeader read_image_header(std::string_view bytes, std::int64_t max_pixels) {
  if (bytes.empty()) return refused(ImageFormat::jpeg, "empty file");
  ImageHeader h;
  if (is_jpeg(bytes))
    h = jpeg_header(bytes);
  else if (is_png(bytes))
    h = png_header(bytes);
  else
    return refused(ImageFormat::jpeg, "not a JPEG or PNG file");
  if (!h.problem.empty()) return h;
  if (h.width <= 0 || h.height <= 0)
    return refused(h.format,
                   fmt::format("the header announces an empty {}×{} image", h.width, h.height));
  if (h.width > max_pixels / h.height)  // width × height > max_pixels, without overflowing
    return refused(h.format, fmt::format("the header announces {}×{} = {} pixels, more than "
                                         "max_image_pixels = {} (a decompression bomb?)",
                                         h.width, h.height,
                                         static_cast<std::uint64_t>(h.width) *
                                             static_cast<std::uint64_t>(h.height),
                                         max_pixels));
  return h;
}

}  // namespace wscsl
