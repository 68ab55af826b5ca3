#include "wscsl/data/resample.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // PIL's fixed-point precision for 8-bit images

// The weights of each output pixel along one axis, as PIL's precompute_coeffs and
// normalize_coeffs_8bpc compute them.
struct AxisWeights {
  int ksize = 0;
  std::vector<int> first;    // first input pixel of each output pixel
  std::vector<int> count;    // how many input pixels it reads
  std::vector<int> weights;  // ksize per output pixel, fixed point
};

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

AxisWeights axis_weights(int in_size, int out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = scale < 1.0 ? 1.0 : scale;
  const double support = 1.0 * filter_scale;  // the triangle's support is 1
  AxisWeights w;
  w.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  w.weights.assign(static_cast<std::size_t>(out_size) * w.ksize, 0);
  std::vector<double> k(static_cast<std::size_t>(w.ksize));
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double inverse = 1.0 / filter_scale;
    int xmin = static_cast<int>(center - support + 0.5);  // truncation, as C's (int)
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double total = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[static_cast<std::size_t>(x)] = triangle((x + xmin - center + 0.5) * inverse);
      total += k[static_cast<std::size_t>(x)];
    }
    for (int x = 0; x < xmax; ++x) {
      double v = k[static_cast<std::size_t>(x)];
      if (total != 0.0) v /= total;
      const double scaled = v * (1 << kPrecisionBits);
      w.weights[static_cast<std::size_t>(xx) * w.ksize + x] =
          static_cast<int>(v < 0 ? -0.5 + scaled : 0.5 + scaled);
    }
    w.first.push_back(xmin);
    w.count.push_back(xmax);
  }
  return w;
}

std::uint8_t clip8(int in) {
  if (in >= (1 << kPrecisionBits << 8)) return 255;
  if (in <= 0) return 0;
  return static_cast<std::uint8_t>(in >> kPrecisionBits);
}

Image8 horizontal_pass(const Image8& in, int width) {
  const AxisWeights w = axis_weights(in.width, width);
  Image8 out{width, in.height, in.channels, {}};
  out.pixels.resize(static_cast<std::size_t>(width) * in.height * in.channels);
  const int c = in.channels;
  for (int y = 0; y < in.height; ++y) {
    const std::uint8_t* src = in.row(y);
    std::uint8_t* dst = out.row(y);
    for (int xx = 0; xx < width; ++xx) {
      const int* k = &w.weights[static_cast<std::size_t>(xx) * w.ksize];
      const int xmin = w.first[static_cast<std::size_t>(xx)];
      const int count = w.count[static_cast<std::size_t>(xx)];
      for (int b = 0; b < c; ++b) {
        int sum = 1 << (kPrecisionBits - 1);
        for (int x = 0; x < count; ++x)
          sum += src[(x + xmin) * c + b] * k[x];
        dst[xx * c + b] = clip8(sum);
      }
    }
  }
  return out;
}

Image8 vertical_pass(const Image8& in, int height) {
  const AxisWeights w = axis_weights(in.height, height);
  Image8 out{in.width, height, in.channels, {}};
  out.pixels.resize(static_cast<std::size_t>(in.width) * height * in.channels);
  const int row_values = in.width * in.channels;
  for (int yy = 0; yy < height; ++yy) {
    const int* k = &w.weights[static_cast<std::size_t>(yy) * w.ksize];
    const int ymin = w.first[static_cast<std::size_t>(yy)];
    const int count = w.count[static_cast<std::size_t>(yy)];
    std::uint8_t* dst = out.row(yy);
    for (int i = 0; i < row_values; ++i) {
      int sum = 1 << (kPrecisionBits - 1);
      for (int y = 0; y < count; ++y)
        sum += in.row(y + ymin)[i] * k[y];
      dst[i] = clip8(sum);
    }
  }
  return out;
}

}  // namespace

Image8 resize_bilinear(const Image8& image, int width, int height) {
  if (width <= 0 || height <= 0)
    throw Error(fmt::format("cannot resize an image to {}×{}", width, height));
  Image8 out = image;
  if (width != image.width) out = horizontal_pass(out, width);
  if (height != image.height) out = vertical_pass(out, height);
  return out;
}

std::pair<int, int> shorter_side_size(int width, int height, int size) {
  const bool wide = width > height;
  const std::int64_t shorter = wide ? height : width;
  const std::int64_t longer = wide ? width : height;
  // Python evaluates size * long / short as an exact integer product, then a rounded division.
  const int resized_long =
      static_cast<int>(static_cast<double>(size * longer) / static_cast<double>(shorter));
  return wide ? std::pair<int, int>{resized_long, size} : std::pair<int, int>{size, resized_long};
}

int center_crop_offset(int in, int out) {
  // (in − out) / 2 is a multiple of 0.5, exact in double; nearbyint rounds halves to even.
  return static_cast<int>(std::nearbyint((in - out) / 2.0));
}

void resize_and_center_crop(const Image8& image, int size, std::uint8_t* out) {
  const auto [width, height] = shorter_side_size(image.width, image.height, size);
  const Image8 resized = resize_bilinear(image, width, height);
  const int top = center_crop_offset(height, size);
  const int left = center_crop_offset(width, size);
  const int c = resized.channels;
  for (int ch = 0; ch < c; ++ch)
    for (int y = 0; y < size; ++y) {
      const std::uint8_t* src = resized.row(top + y) + static_cast<std::size_t>(left) * c + ch;
      std::uint8_t* dst = out + (static_cast<std::size_t>(ch) * size + y) * size;
      for (int x = 0; x < size; ++x)
        dst[x] = src[x * c];
    }
}

}  // namespace wscsl
