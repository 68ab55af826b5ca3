#include "attention_crop.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <torch/nn/functional/upsampling.h>

namespace wscsl::asen_pp {

namespace F = torch::nn::functional;

CropBox attention_box(const torch::Tensor& attention, std::int64_t height, std::int64_t width,
                      double threshold) {
  const torch::Tensor resized =
      F::interpolate(
          attention.detach().to(torch::kDouble).view({1, 1, attention.size(0), attention.size(1)}),
          F::InterpolateFuncOptions()
              .size(std::vector<std::int64_t>{height, width})
              .mode(torch::kBilinear)
              .align_corners(false))
          .view({height, width});
  const double low = resized.min().item<double>(), high = resized.max().item<double>();
  torch::Tensor kept;
  if (high > low) {
    const torch::Tensor quantised = torch::floor((resized - low) / (high - low) * 255.0);
    kept = quantised > 255.0 * threshold;
  } else {
    kept = torch::ones({height, width}, torch::kBool);
  }
  const torch::Tensor rows = kept.any(1).nonzero().view(-1);
  const torch::Tensor columns = kept.any(0).nonzero().view(-1);
  const std::int64_t top = rows[0].item<std::int64_t>(), left = columns[0].item<std::int64_t>();
  const std::int64_t box_height = rows[-1].item<std::int64_t>() - top + 1,
                     box_width = columns[-1].item<std::int64_t>() - left + 1;
  const std::int64_t centre_x = left + box_width / 2, centre_y = top + box_height / 2;
  const std::int64_t side = std::min(std::max(box_width, box_height), std::min(height, width));
  // As released, then moved inside: an odd side can overhang the far edge by one pixel there
  // (PIL fills it with black).
  const auto place = [side](std::int64_t centre, std::int64_t extent) {
    const std::int64_t start =
        centre + side / 2 > extent ? extent - side : std::max<std::int64_t>(0, centre - side / 2);
    return std::min(start, extent - side);
  };
  return {place(centre_x, width), place(centre_y, height), side};
}

torch::Tensor attention_crops(const torch::Tensor& images, const torch::Tensor& attention,
                              std::int64_t size, double threshold) {
  const torch::Tensor maps = attention.detach().cpu();
  std::vector<torch::Tensor> crops;
  for (std::int64_t b = 0; b < images.size(0); ++b) {
    const CropBox box = attention_box(maps[b], images.size(2), images.size(3), threshold);
    const torch::Tensor crop = images.slice(0, b, b + 1)
                                   .slice(2, box.y, box.y + box.size)
                                   .slice(3, box.x, box.x + box.size);
    crops.push_back(F::interpolate(crop, F::InterpolateFuncOptions()
                                             .size(std::vector<std::int64_t>{size, size})
                                             .mode(torch::kBilinear)
                                             .align_corners(false)
                                             .antialias(true)));
  }
  return torch::cat(crops, 0);
}

}  // namespace wscsl::asen_pp
