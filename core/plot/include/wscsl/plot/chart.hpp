// Axes, line and scatter charts and legends drawn on a Canvas.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "wscsl/plot/canvas.hpp"

namespace wscsl::plot {

struct Range {
  double lo = 0, hi = 1;
};

// The range of `values` widened by `margin` of its width on both sides (a single value, or none,
// gives a unit-wide range around it). Non-finite values are ignored.
Range range_of(const std::vector<double>& values, double margin = 0.05);

// Between 3 and 7 round tick positions (1, 2 or 5 × 10^k apart) inside `range`.
std::vector<double> ticks(const Range& range);

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};

// Data coordinates x ∈ `x`, y ∈ `y` drawn inside `area`: a frame, a title above it, and, when
// `with_ticks`, tick labels and axis labels around it (the frame is inset to leave them room).
class Axes {
 public:
  Axes(Canvas& canvas, Rect area, Range x, Range y, const std::string& title,
       const std::string& x_label = "", const std::string& y_label = "", bool with_ticks = true);

  double px(double x) const;  // canvas column of data x
  double py(double y) const;  // canvas row of data y (up is larger y)
  const Rect& frame() const { return frame_; }

  // Non-finite points break the line.
  void line(const std::vector<double>& xs, const std::vector<double>& ys, Color color,
            int thickness = 2);
  void scatter(const std::vector<double>& xs, const std::vector<double>& ys,
               const std::vector<Color>& colors, int radius = 2);

 private:
  Canvas& canvas_;
  Rect frame_;
  Range x_, y_;
};

// A vertical list of coloured squares with labels, its top-left corner at (x, y). Returns the
// height it took.
int legend(Canvas& canvas, int x, int y, const std::vector<std::pair<std::string, Color>>& entries,
           double scale = 0.4);

}  // namespace wscsl::plot
