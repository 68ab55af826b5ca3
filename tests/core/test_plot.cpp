#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

#include <torch/types.h>

#include "wscsl/error.hpp"
#include "wscsl/plot/canvas.hpp"
#include "wscsl/plot/chart.hpp"

using namespace wscsl::plot;
namespace fs = std::filesystem;

TEST(Canvas, DrawsAndRoundTripsThroughPng) {
  Canvas canvas(40, 30, kWhite);
  canvas.rectangle(2, 3, 10, 8, kRed, -1);
  canvas.rectangle(20, 5, 10, 10, kGreen, 2);
  // A 2×2 grayscale image scaled to 4×4 at (30, 20): nearest neighbour, each value a 2×2 block.
  canvas.image(torch::tensor({0.0, 1.0, 0.5, 0.25}).reshape({1, 2, 2}), 30, 20, 4, 4);
  EXPECT_EQ(canvas.pixel(2, 3), kRed);
  EXPECT_EQ(canvas.pixel(11, 10), kRed);
  EXPECT_EQ(canvas.pixel(12, 10), kWhite);
  EXPECT_EQ(canvas.pixel(21, 6), kGreen);  // inside the 2-pixel outline
  EXPECT_EQ(canvas.pixel(22, 7), kWhite);  // the interior stays
  EXPECT_EQ(canvas.pixel(30, 20), (Color{0, 0, 0}));
  EXPECT_EQ(canvas.pixel(33, 21), (Color{255, 255, 255}));
  EXPECT_EQ(canvas.pixel(31, 23), (Color{128, 128, 128}));
  EXPECT_EQ(canvas.pixel(33, 23), (Color{64, 64, 64}));

  const fs::path path =
      fs::temp_directory_path() / ("wscsl_canvas_" + std::to_string(::getpid())) / "c.png";
  canvas.save_png(path);
  const Canvas back = Canvas::read_png(path);
  ASSERT_EQ(back.width(), 40);
  ASSERT_EQ(back.height(), 30);
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < 40; ++x)
      ASSERT_EQ(back.pixel(x, y), canvas.pixel(x, y)) << x << "," << y;
  fs::remove_all(path.parent_path());
  EXPECT_THROW(Canvas::read_png(path), wscsl::DataError);
  EXPECT_THROW(canvas.pixel(40, 0), wscsl::Error);
}

TEST(Chart, RangesTicksAndAxesMapping) {
  const Range r = range_of({1.0, 3.0, NAN}, 0.5);
  EXPECT_DOUBLE_EQ(r.lo, 0.0);
  EXPECT_DOUBLE_EQ(r.hi, 4.0);
  const Range single = range_of({2.0});
  EXPECT_DOUBLE_EQ(single.lo, 1.5);
  EXPECT_DOUBLE_EQ(single.hi, 2.5);
  const std::vector<double> unit = ticks({0.0, 1.0});
  ASSERT_EQ(unit.size(), 6u);
  for (std::size_t i = 0; i < unit.size(); ++i)
    EXPECT_NEAR(unit[i], 0.2 * static_cast<double>(i), 1e-12);
  EXPECT_EQ(ticks({-3.0, 14.0}), (std::vector<double>{-0.0, 5, 10}));
  Canvas canvas(200, 100);
  const Axes axes(canvas, {0, 0, 200, 100}, {0.0, 1.0}, {0.0, 1.0}, "t", "", "", false);
  EXPECT_DOUBLE_EQ(axes.px(0.0), axes.frame().x);
  EXPECT_DOUBLE_EQ(axes.px(1.0), axes.frame().x + axes.frame().w - 1);
  EXPECT_DOUBLE_EQ(axes.py(1.0), axes.frame().y);
  EXPECT_DOUBLE_EQ(axes.py(0.0), axes.frame().y + axes.frame().h - 1);
  EXPECT_EQ(palette(0), (Color{31, 119, 180}));
  EXPECT_NE(palette(10), palette(0));
}
