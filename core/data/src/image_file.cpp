#include "wscsl/data/image_file.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "wscsl/data/image_header.hpp"
#include "wscsl/error.hpp"

namespace fs = std::filesystem;

namespace wscsl {

DecodedImage decode_image(const std::string& bytes, std::int64_t max_pixels) {
  DecodedImage out;
  const ImageHeader h = read_image_header(bytes, max_pixels);
  if (!h.problem.empty()) return {{}, h.problem};
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
