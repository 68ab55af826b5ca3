#include "wscsl/plot/neighbour_grid.hpp"

namespace wscsl::plot {
namespace {

constexpr int kFrame = 3;  // frame width around each image, pixels
constexpr int kGap = 4;
constexpr int kTitle = 30;
constexpr int kHeading = 22;

}  // namespace

Canvas neighbour_grid(const std::string& title, const std::vector<NeighbourBlock>& blocks,
                      int columns, int cell) {
  const int pitch = cell + 2 * kFrame + kGap;
  const int left = kGap;
  int height = kTitle;
  for (const NeighbourBlock& b : blocks)
    height += kHeading + pitch * static_cast<int>(b.rows.size());
  Canvas canvas(left + pitch * (columns + 1) + kGap, height);
  canvas.text(title, 8, 20, kBlack, 0.4);
  int top = kTitle;
  for (const NeighbourBlock& b : blocks) {
    canvas.text(b.heading, 8, top + kHeading - 6, kBlack, 0.45);
    for (std::size_t r = 0; r < b.rows.size(); ++r) {
      const NeighbourRow& row = b.rows[r];
      const int y = top + kHeading + static_cast<int>(r) * pitch;
      canvas.rectangle(left, y, cell + 2 * kFrame, cell + 2 * kFrame, kBlack, 1);
      canvas.image(row.query, left + kFrame, y + kFrame, cell, cell);
      for (std::size_t j = 0; j < row.neighbours.size(); ++j) {
        const int x = left + static_cast<int>(j + 1) * pitch;
        canvas.rectangle(x, y, cell + 2 * kFrame, cell + 2 * kFrame, row.frames[j], kFrame);
        canvas.image(row.neighbours[j], x + kFrame, y + kFrame, cell, cell);
      }
    }
    top += kHeading + pitch * static_cast<int>(b.rows.size());
  }
  return canvas;
}

}  // namespace wscsl::plot
