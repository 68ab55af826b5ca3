#include "wscsl/data/image_file.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "wscsl/error.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

struct Header {
  std::int64_t width = 0, height = 0;
  std::string problem;
};

std::uint32_t big_endian(const std::string& b, std::size_t at, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | static_cast<std::uint8_t>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

bool is_jpeg(const std::string& b) {
  return b.size() >= 3 && static_cast<std::uint8_t>(b[0]) == 0xFF &&
         static_cast<std::uint8_t>(b[1]) == 0xD8 && static_cast<std::uint8_t>(b[2]) == 0xFF;
}

bool is_png(const std::string& b) {
  return b.size() >= 8 && b.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

// Walks the marker segments up to the first scan: the frame header gives the size, and the
// entropy-coded data after the scan must be followed by an end-of-image marker somewhere (inside
// entropy-coded data 0xFF is always followed by 0x00 or a restart marker, so FF D9 is the marker).
Header jpeg_header(const std::string& b) {
  Header h;
  std::size_t at = 2;
  bool have_frame = false;
  while (true) {
    while (at < b.size() && static_cast<std::uint8_t>(b[at]) == 0xFF)
      ++at;  // fill bytes before a marker
    if (at >= b.size()) return {0, 0, "truncated JPEG (it ends inside its headers)"};
    const std::uint8_t marker = static_cast<std::uint8_t>(b[at++]);
    if (marker == 0xD9) return {0, 0, "JPEG without image data (end-of-image before any scan)"};
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length
    if (at + 2 > b.size()) return {0, 0, "truncated JPEG (it ends inside its headers)"};
    const std::size_t length = big_endian(b, at, 2);
    if (length < 2 || at + length > b.size())
      return {0, 0, "truncated JPEG (a header segment runs past the end of the file)"};
    const bool frame =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frame) {
      if (length < 7) return {0, 0, "corrupt JPEG frame header"};
      h.height = big_endian(b, at + 3, 2);
      h.width = big_endian(b, at + 5, 2);
      have_frame = true;
    }
    if (marker == 0xDA) {
      if (!have_frame) return {0, 0, "corrupt JPEG (a scan before the frame header)"};
      if (b.find("\xFF\xD9", at + length) == std::string::npos)
        return {0, 0, "truncated JPEG (no end-of-image marker after the image data)"};
      return h;
    }
    at += length;
  }
}

// The IHDR chunk gives the size; the chunks must reach an IEND chunk within the file.
Header png_header(const std::string& b) {
  if (b.size() < 8 + 8 + 13 || b.compare(12, 4, "IHDR") != 0)
    return {0, 0, "corrupt PNG (no IHDR chunk after the signature)"};
  Header h;
  h.width = big_endian(b, 16, 4);
  h.height = big_endian(b, 20, 4);
  std::size_t at = 8;
  while (true) {
    if (at + 8 > b.size()) return {0, 0, "truncated PNG (no IEND chunk)"};
    const std::size_t length = big_endian(b, at, 4);
    if (at + 12 + length > b.size())
      return {0, 0, "truncated PNG (a chunk runs past the end of the file)"};
    if (b.compare(at + 4, 4, "IEND") == 0) return h;
    at += 12 + length;
  }
}

}  // namespace

DecodedImage decode_image(const std::string& bytes, std::int64_t max_pixels) {
  DecodedImage out;
  if (bytes.empty()) return {{}, "empty file"};
  Header h;
  if (is_jpeg(bytes))
    h = jpeg_header(bytes);
  else if (is_png(bytes))
    h = png_header(bytes);
  else
    return {{}, "not a JPEG or PNG file"};
  if (!h.problem.empty()) return {{}, h.problem};
  if (h.width <= 0 || h.height <= 0)
    return {{}, fmt::format("the header announces an empty {}×{} image", h.width, h.height)};
  if (h.width * h.height > max_pixels)
    return {{},
            fmt::format("the header announces {}×{} = {} pixels, more than max_image_pixels = "
                        "{} (a decompression bomb?)",
                        h.width, h.height, h.width * h.height, max_pixels)};
  const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
  cv::Mat bgr;
  try {
    bgr = cv::imdecode(buffer, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION);
  } catch (const cv::Exception& e) {
    return {{}, fmt::format("cannot decode the image ({})", e.msg)};
  }
  if (bgr.empty() || bgr.type() != CV_8UC3) return {{}, "cannot decode the image (corrupt data)"};
  if (bgr.cols != h.width || bgr.rows != h.height)
    return {{},
            fmt::format("decoded {}×{} pixels where the header announces {}×{}", bgr.cols, bgr.rows,
                        h.width, h.height)};
  out.image.width = bgr.cols;
  out.image.height = bgr.rows;
  out.image.channels = 3;
  out.image.pixels.resize(static_cast<std::size_t>(bgr.cols) * bgr.rows * 3);
  for (int y = 0; y < bgr.rows; ++y) {
    const std::uint8_t* src = bgr.ptr<std::uint8_t>(y);
    std::uint8_t* dst = out.image.row(y);
    for (int x = 0; x < bgr.cols; ++x, src += 3, dst += 3) {
      dst[0] = src[2];
      dst[1] = src[1];
      dst[2] = src[0];
    }
  }
  return out;
}

DecodedImage read_image_file(const fs::path& path, std::int64_t max_pixels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {{}, fmt::format("cannot open {}", path.string())};
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return {{}, fmt::format("read error in {}", path.string())};
  return decode_image(content.str(), max_pixels);
}

void write_image_file(const fs::path& path, const Image8& image) {
  const std::string ext = path.extension().string();
  std::vector<int> params;
  if (ext == ".jpg" || ext == ".jpeg")
    params = {cv::IMWRITE_JPEG_QUALITY, 95};
  else if (ext != ".png")
    throw Error(
        fmt::format("{}: cannot write images of type '{}' (use .png or .jpg)", path.string(), ext));
  if (image.channels != 1 && image.channels != 3)
    throw Error(
        fmt::format("{}: cannot write an image with {} channels", path.string(), image.channels));
  cv::Mat mat(image.height, image.width, image.channels == 3 ? CV_8UC3 : CV_8UC1);
  for (int y = 0; y < image.height; ++y) {
    const std::uint8_t* src = image.row(y);
    std::uint8_t* dst = mat.ptr<std::uint8_t>(y);
    if (image.channels == 1) {
      std::copy(src, src + image.width, dst);
      continue;
    }
    for (int x = 0; x < image.width; ++x, src += 3, dst += 3) {
      dst[0] = src[2];
      dst[1] = src[1];
      dst[2] = src[0];
    }
  }
  bool written = false;
  try {
    written = cv::imwrite(path.string(), mat, params);
  } catch (const cv::Exception& e) {
    throw Error(fmt::format("{}: cannot write the image ({})", path.string(), e.msg));
  }
  if (!written) throw Error(fmt::format("{}: cannot write the image", path.string()));
}

}  // namespace wscsl
