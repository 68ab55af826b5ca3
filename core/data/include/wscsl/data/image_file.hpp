// Reading and writing image files (JPEG and PNG). Decoding gives what the reference loaders get
// from PIL's Image.open(path).convert("RGB"): 8-bit RGB, EXIF orientation ignored, gray replicated,
// alpha dropped. The codec library stays inside the core library; only plain types cross here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace wscsl {

// An 8-bit image, rows top to bottom, channels interleaved (RGB when channels == 3).
struct Image8 {
  int width = 0;
  int height = 0;
  int channels = 3;
  std::vector<std::uint8_t> pixels;  // height × width × channels

  std::uint8_t* row(int y) {
    return pixels.data() + static_cast<std::size_t>(y) * width * channels;
  }
  const std::uint8_t* row(int y) const {
    return pixels.data() + static_cast<std::size_t>(y) * width * channels;
  }
};

// PIL's limit above which Image.open warns of a decompression bomb (it refuses twice as much).
inline constexpr std::int64_t kDefaultMaxImagePixels = 89478485;

// The result of decoding: an image, or the reason there is none.
struct DecodedImage {
  Image8 image;
  std::string problem;  // empty on success
};

// Decodes the bytes of a JPEG or PNG file to RGB. Refused with a reason, never a partial image:
// an empty file, another format, a header announcing more than `max_pixels` pixels (checked before
// anything is decoded), a truncated file (a JPEG without its end-of-image marker, a PNG without
// its IEND chunk), or data the codec rejects.
DecodedImage decode_image(const std::string& bytes, std::int64_t max_pixels);

// Reads and decodes a file; an unreadable file is a problem too.
DecodedImage read_image_file(const std::filesystem::path& path, std::int64_t max_pixels);

// Writes an RGB (or gray, channels == 1) image as PNG (lossless) or JPEG (quality 95), chosen by
// the extension (.png, .jpg, .jpeg). Throws wscsl::Error naming the file when it cannot.
void write_image_file(const std::filesystem::path& path, const Image8& image);

}  // namespace wscsl
