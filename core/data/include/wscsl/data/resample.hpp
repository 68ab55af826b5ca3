// The geometric part of the reference image pipeline (CSN, SCE-Net and DiscoverNet all use
// torchvision's Resize(size) → CenterCrop(size) on PIL images), reproduced exactly.
#pragma once

#include <cstdint>
#include <utility>

#include "wscsl/data/image_file.hpp"

namespace wscsl {

// PIL's Image.resize((width, height), Image.BILINEAR) for an 8-bit image: a triangle filter whose
// support grows with the scale factor when downsampling (antialiasing; plain bilinear sampling
// when upsampling), 22-bit fixed-point weights, a horizontal pass then a vertical pass with
// rounding to 8 bits in between; a pass whose size does not change is skipped.
Image8 resize_bilinear(const Image8& image, int width, int height);

// torchvision's Resize(size) output (width, height): the shorter side becomes `size`, the longer
// int(size · long / short) (truncated, as Python's int()).
std::pair<int, int> shorter_side_size(int width, int height, int size);

// torchvision's CenterCrop offset int(round((in − out) / 2)), Python's round: halves to even.
int center_crop_offset(int in, int out);

// Resize(size) then CenterCrop(size), written channel-major (C × size × size) to `out`.
void resize_and_center_crop(const Image8& image, int size, std::uint8_t* out);

}  // namespace wscsl
