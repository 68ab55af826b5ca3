#include "wscsl/plot/canvas.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::plot {
namespace {

constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;

cv::Scalar scalar(Color c) {
  return cv::Scalar(c.r, c.g, c.b);  // the canvas stores RGB, and OpenCV draws in storage order
}

cv::Point point(double x, double y) {
  return cv::Point(static_cast<int>(std::lround(x)), static_cast<int>(std::lround(y)));
}

// The canvas's pixels as an OpenCV image (no copy).
cv::Mat view(std::vector<std::uint8_t>& rgb, int width, int height) {
  return cv::Mat(height, width, CV_8UC3, rgb.data());
}

std::string ascii(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return out;
}

}  // namespace

Color palette(std::size_t i) {
  static constexpr std::array<Color, 10> tableau = {{{31, 119, 180},
                                                     {255, 127, 14},
                                                     {44, 160, 44},
                                                     {214, 39, 40},
                                                     {148, 103, 189},
                                                     {140, 86, 75},
                                                     {227, 119, 194},
                                                     {127, 127, 127},
                                                     {188, 189, 34},
                                                     {23, 190, 207}}};
  const Color base = tableau[i % 10];
  if ((i / 10) % 2 == 0) return base;
  auto lighter = [](std::uint8_t v) { return static_cast<std::uint8_t>(v + (255 - v) / 2); };
  return {lighter(base.r), lighter(base.g), lighter(base.b)};
}

Canvas::Canvas(int width, int height, Color background) : width_(width), height_(height) {
  if (width <= 0 || height <= 0)
    throw Error(fmt::format("a canvas needs a positive size, got {}x{}", width, height));
  rgb_.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
  for (std::size_t i = 0; i < rgb_.size(); i += 3) {
    rgb_[i] = background.r;
    rgb_[i + 1] = background.g;
    rgb_[i + 2] = background.b;
  }
}

Color Canvas::pixel(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_)
    throw Error(fmt::format("pixel ({}, {}) is outside the {}x{} canvas", x, y, width_, height_));
  const std::size_t at = (static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) +
                          static_cast<std::size_t>(x)) *
                         3;
  return {rgb_[at], rgb_[at + 1], rgb_[at + 2]};
}

void Canvas::line(double x0, double y0, double x1, double y1, Color color, int thickness) {
  cv::Mat mat = view(rgb_, width_, height_);
  cv::line(mat, point(x0, y0), point(x1, y1), scalar(color), thickness, cv::LINE_AA);
}

void Canvas::rectangle(int x, int y, int w, int h, Color color, int thickness) {
  cv::Mat mat = view(rgb_, width_, height_);
  if (thickness < 0) {
    cv::rectangle(mat, cv::Rect(x, y, w, h), scalar(color), cv::FILLED);
    return;
  }
  for (int i = 0; i < thickness && 2 * i < std::min(w, h); ++i)
    cv::rectangle(mat, cv::Rect(x + i, y + i, w - 2 * i, h - 2 * i), scalar(color), 1);
}

void Canvas::dot(double x, double y, int radius, Color color) {
  cv::Mat mat = view(rgb_, width_, height_);
  cv::circle(mat, point(x, y), radius, scalar(color), cv::FILLED, cv::LINE_AA);
}

void Canvas::text(const std::string& text, int x, int y, Color color, double scale) {
  cv::Mat mat = view(rgb_, width_, height_);
  cv::putText(mat, ascii(text), cv::Point(x, y), kFont, scale, scalar(color), 1, cv::LINE_AA);
}

int Canvas::text_width(const std::string& text, double scale) {
  int baseline = 0;
  return cv::getTextSize(ascii(text), kFont, scale, 1, &baseline).width;
}

int Canvas::text_height(double scale) {
  int baseline = 0;
  return cv::getTextSize("Ag", kFont, scale, 1, &baseline).height + baseline;
}

void Canvas::image(const at::Tensor& chw, int x, int y, int w, int h) {
  if (!chw.defined() || chw.dim() != 3 || (chw.size(0) != 1 && chw.size(0) != 3))
    throw Error("Canvas::image expects a float image [C, H, W] with C = 1 or 3");
  const at::Tensor pixels =
      (chw.to(at::kFloat).clamp(0, 1) * 255).round().to(at::kByte).contiguous();
  const auto a = pixels.accessor<std::uint8_t, 3>();
  const std::int64_t channels = chw.size(0), rows = chw.size(1), cols = chw.size(2);
  for (int j = 0; j < h; ++j) {
    const int cy = y + j;
    if (cy < 0 || cy >= height_) continue;
    const std::int64_t sy = std::min<std::int64_t>(rows - 1, j * rows / h);
    for (int i = 0; i < w; ++i) {
      const int cx = x + i;
      if (cx < 0 || cx >= width_) continue;
      const std::int64_t sx = std::min<std::int64_t>(cols - 1, i * cols / w);
      const std::size_t at = (static_cast<std::size_t>(cy) * static_cast<std::size_t>(width_) +
                              static_cast<std::size_t>(cx)) *
                             3;
      for (std::int64_t c = 0; c < 3; ++c)
        rgb_[at + static_cast<std::size_t>(c)] = a[channels == 1 ? 0 : c][sy][sx];
    }
  }
}

std::string Canvas::png() const {
  cv::Mat rgb(height_, width_, CV_8UC3, const_cast<std::uint8_t*>(rgb_.data()));
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<std::uint8_t> encoded;
  if (!cv::imencode(".png", bgr, encoded))
    throw Error(fmt::format("cannot encode a {}x{} canvas as PNG", width_, height_));
  return std::string(encoded.begin(), encoded.end());
}

void Canvas::save_png(const fs::path& path) const {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  write_file_atomically(path, png());
}

Canvas Canvas::read_png(const fs::path& path) {
  const cv::Mat bgr = cv::imread(path.string(), cv::IMREAD_COLOR);
  if (bgr.empty()) throw DataError(fmt::format("{}: not a readable image", path.string()));
  Canvas canvas(bgr.cols, bgr.rows);
  cv::Mat rgb = view(canvas.rgb_, canvas.width_, canvas.height_);
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return canvas;
}

}  // namespace wscsl::plot
