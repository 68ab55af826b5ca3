// Pictures for evaluators and the host: an RGB canvas with the few drawing operations plots need,
// read and written as PNG. OpenCV stays behind this header (core/plot/src/canvas.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace wscsl::plot {

struct Color {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Color& o) const { return r == o.r && g == o.g && b == o.b; }
  bool operator!=(const Color& o) const { return !(*this == o); }
};

inline constexpr Color kWhite{255, 255, 255};
inline constexpr Color kBlack{0, 0, 0};
inline constexpr Color kGray{128, 128, 128};
inline constexpr Color kLightGray{225, 225, 225};
inline constexpr Color kGreen{0, 170, 0};
inline constexpr Color kRed{220, 0, 0};

// The i-th colour of a qualitative palette: Tableau 10, then ten lighter variants, then repeating.
Color palette(std::size_t i);

class Canvas {
 public:
  Canvas(int width, int height, Color background = kWhite);

  int width() const { return width_; }
  int height() const { return height_; }
  Color pixel(int x, int y) const;

  void line(double x0, double y0, double x1, double y1, Color color, int thickness = 1);
  // Outline `thickness` pixels wide inside the rectangle; thickness < 0 fills it.
  void rectangle(int x, int y, int w, int h, Color color, int thickness = 1);
  void dot(double x, double y, int radius, Color color);
  // ASCII text (other bytes are drawn as '?') with the left end of its baseline at (x, y).
  void text(const std::string& text, int x, int y, Color color, double scale = 0.4);
  static int text_width(const std::string& text, double scale = 0.4);
  static int text_height(double scale = 0.4);
  // A float image [C, H, W] (C = 1 or 3, values in [0, 1]) scaled to w × h at (x, y) with
  // nearest-neighbour sampling.
  void image(const at::Tensor& chw, int x, int y, int w, int h);

  // The canvas encoded as PNG; throws Error when OpenCV cannot encode it.
  std::string png() const;
  // Writes a PNG atomically (creating missing directories); throws Error naming the file.
  void save_png(const std::filesystem::path& path) const;
  // Reads a PNG (or any image OpenCV decodes) as RGB; throws DataError naming the file.
  static Canvas read_png(const std::filesystem::path& path);

 private:
  int width_, height_;
  std::vector<std::uint8_t> rgb_;  // row-major, three bytes per pixel
};

}  // namespace wscsl::plot
