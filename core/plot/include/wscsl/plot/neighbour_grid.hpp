// The picture of retrieval results that `evaluator/retrieval_grid` and `wscsl search` draw: under
// a title, one block per condition, each a heading and rows of a query image (framed black)
// followed by its neighbours, nearest first, each in a frame of the caller's colour.
//
// Layout: images of `cell` pixels in 3-pixel frames, 4 pixels apart; a 30-pixel title and a
// 22-pixel heading per block.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "wscsl/plot/canvas.hpp"

namespace wscsl::plot {

struct NeighbourRow {
  at::Tensor query;                    // [C, H, W] float in [0, 1]
  std::vector<at::Tensor> neighbours;  // the same, nearest first
  std::vector<Color> frames;           // one per neighbour
};

struct NeighbourBlock {
  std::string heading;
  std::vector<NeighbourRow> rows;
};

// `columns` neighbours fit in each row (rows with fewer leave the rest empty).
Canvas neighbour_grid(const std::string& title, const std::vector<NeighbourBlock>& blocks,
                      int columns, int cell);

}  // namespace wscsl::plot
