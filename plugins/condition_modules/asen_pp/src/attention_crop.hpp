// ASEN++'s crop of an image around where an attribute's attention looks (Dong et al., TIP 2021, the
// released LocalTransform): the attention map upsampled to the image, min-max normalised, quantised
// to 8 bits and thresholded; the square around the bounding box of what remains, kept inside the
// image; that square resized for the local branch.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace wscsl::asen_pp {

// A square of `size` pixels whose top-left pixel is (x, y), in an image's pixels.
struct CropBox {
  std::int64_t x = 0, y = 0, size = 0;
};

// The box of one attention map α [h, w] over an image of height × width pixels, with `threshold`
// in [0, 1): α is resized to the image bilinearly (pixel centres, as cv2.INTER_LINEAR), min-max
// normalised, quantised as uint8(255·n), and the pixels above 255·threshold kept; the box is the
// square of side max(w, h) of their bounding rectangle (at most the image's shorter side), centred
// on it by integer halves and moved inside the image as released (and by the one pixel an odd
// side can overhang there). A constant map keeps every pixel.
CropBox attention_box(const torch::Tensor& attention, std::int64_t height, std::int64_t width,
                      double threshold);

// The crops [B, channels, size, size] of `images` [B, channels, H, W] by the boxes of `attention`
// [B, h, w] (read without gradient), each resized to size × size bilinearly with antialiasing (as
// PIL's resize). The images' gradient flows through the crops.
torch::Tensor attention_crops(const torch::Tensor& images, const torch::Tensor& attention,
                              std::int64_t size, double threshold);

}  // namespace wscsl::asen_pp
