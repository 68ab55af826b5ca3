#include "wscsl/plot/chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace wscsl::plot {
namespace {

constexpr double kLabelScale = 0.35;
constexpr double kTitleScale = 0.45;

std::string tick_label(double v) {
  if (std::abs(v) < 1e-12) return "0";
  return fmt::format("{:g}", v);
}

}  // namespace

Range range_of(const std::vector<double>& values, double margin) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) return {0.0, 1.0};
  if (hi - lo <= 1e-12 * std::max(1.0, std::abs(lo))) return {lo - 0.5, hi + 0.5};
  const double pad = (hi - lo) * margin;
  return {lo - pad, hi + pad};
}

std::vector<double> ticks(const Range& range) {
  const double width = range.hi - range.lo;
  const double raw = width / 5.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (width / step <= 6.0) break;
  }
  std::vector<double> out;
  for (double i = std::ceil(range.lo / step); i * step <= range.hi + 1e-9 * step; i += 1.0)
    out.push_back(i * step);
  return out;
}

Axes::Axes(Canvas& canvas, Rect area, Range x, Range y, const std::string& title,
           const std::string& x_label, const std::string& y_label, bool with_ticks)
    : canvas_(canvas), x_(x), y_(y) {
  const int title_h = Canvas::text_height(kTitleScale) + 6;
  const int label_h = Canvas::text_height(kLabelScale) + 4;
  int left = 4, bottom = 4;
  if (with_ticks) {
    int widest = 0;
    for (double t : ticks(y))
      widest = std::max(widest, Canvas::text_width(tick_label(t), kLabelScale));
    left = widest + 8 + (y_label.empty() ? 0 : label_h);
    bottom = label_h + 4 + (x_label.empty() ? 0 : label_h);
  }
  frame_ = {area.x + left, area.y + title_h, std::max(1, area.w - left - 8),
            std::max(1, area.h - title_h - bottom)};
  canvas_.text(title, area.x + (area.w - Canvas::text_width(title, kTitleScale)) / 2,
               area.y + title_h - 6, kBlack, kTitleScale);
  canvas_.rectangle(frame_.x, frame_.y, frame_.w, frame_.h, kGray, 1);
  if (!with_ticks) return;
  const int label_ascent = Canvas::text_height(kLabelScale) - 3;
  for (double t : ticks(x)) {
    const double cx = px(t);
    canvas_.line(cx, frame_.y + frame_.h, cx, frame_.y + frame_.h + 3, kGray, 1);
    const std::string s = tick_label(t);
    canvas_.text(s, static_cast<int>(cx) - Canvas::text_width(s, kLabelScale) / 2,
                 frame_.y + frame_.h + 5 + label_ascent, kBlack, kLabelScale);
  }
  for (double t : ticks(y)) {
    const double cy = py(t);
    canvas_.line(frame_.x - 3, cy, frame_.x, cy, kGray, 1);
    const std::string s = tick_label(t);
    canvas_.text(s, frame_.x - 5 - Canvas::text_width(s, kLabelScale),
                 static_cast<int>(cy) + label_ascent / 2, kBlack, kLabelScale);
  }
  if (!x_label.empty())
    canvas_.text(x_label, frame_.x + (frame_.w - Canvas::text_width(x_label, kLabelScale)) / 2,
                 area.y + area.h - 4, kBlack, kLabelScale);
  if (!y_label.empty()) canvas_.text(y_label, area.x, frame_.y - 4, kBlack, kLabelScale);
}

double Axes::px(double x) const {
  return frame_.x + (x - x_.lo) / (x_.hi - x_.lo) * (frame_.w - 1);
}

double Axes::py(double y) const {
  return frame_.y + (y_.hi - y) / (y_.hi - y_.lo) * (frame_.h - 1);
}

void Axes::line(const std::vector<double>& xs, const std::vector<double>& ys, Color color,
                int thickness) {
  for (std::size_t i = 1; i < std::min(xs.size(), ys.size()); ++i) {
    if (!std::isfinite(xs[i - 1] + ys[i - 1] + xs[i] + ys[i])) continue;
    canvas_.line(px(xs[i - 1]), py(ys[i - 1]), px(xs[i]), py(ys[i]), color, thickness);
  }
  if (xs.size() == 1 && ys.size() == 1 && std::isfinite(xs[0] + ys[0]))
    canvas_.dot(px(xs[0]), py(ys[0]), thickness + 1, color);
}

void Axes::scatter(const std::vector<double>& xs, const std::vector<double>& ys,
                   const std::vector<Color>& colors, int radius) {
  for (std::size_t i = 0; i < std::min({xs.size(), ys.size(), colors.size()}); ++i)
    if (std::isfinite(xs[i] + ys[i])) canvas_.dot(px(xs[i]), py(ys[i]), radius, colors[i]);
}

int legend(Canvas& canvas, int x, int y, const std::vector<std::pair<std::string, Color>>& entries,
           double scale) {
  const int row = Canvas::text_height(scale) + 4;
  const int box = row - 6;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const int top = y + static_cast<int>(i) * row;
    canvas.rectangle(x, top + 2, box, box, entries[i].second, -1);
    canvas.text(entries[i].first, x + box + 5, top + box + 1, kBlack, scale);
  }
  return static_cast<int>(entries.size()) * row;
}

}  // namespace wscsl::plot
