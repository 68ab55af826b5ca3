// How a dataset turns an image into model input, declared in its DatasetInfo: what a tool that
// brings images of its own (`wscsl index --images`, `wscsl search --query`, `wscsl explore`)
// needs to prepare them exactly as the dataset does, and, with shown_pixels, to undo it for
// pictures.
#pragma once

#include <cstdint>
#include <filesystem>

#include <ATen/core/Tensor.h>

namespace wscsl {

// How an image file becomes the dataset's decoded uint8 pixels.
enum class FilePreparation {
  // The dataset generates its images (Fashion-CRB renders them): it has no image files and
  // declares no way to prepare one.
  None,
  // A JPEG or PNG decoded as PIL's convert("RGB"), resized so that its shorter side is `size`
  // (PIL's bilinear, antialiased when downsampling), then centre-cropped to size × size
  // (torchvision's Resize + CenterCrop).
  ResizeCenterCrop,
};

// How decoded uint8 pixels x become model input.
enum class PixelNormalization {
  ImageNet,  // (x/255 − mean)/std with ImageNet's mean and std (imagenet_mean, imagenet_std)
  None,      // x/255, in [0, 1]
};

struct ImagePreparation {
  FilePreparation files = FilePreparation::None;
  PixelNormalization normalization = PixelNormalization::None;
  // With FilePreparation::ResizeCenterCrop only: the side of the prepared image,
  std::int64_t size = 0;
  // the largest width × height a file may announce (checked in its header before decoding),
  std::int64_t max_image_pixels = 0;
  // the folder of the decoded-image stores as configured (empty: the default folder,
  // image_cache_dir in wscsl/data/image_store.hpp) and the largest store the dataset may write.
  std::filesystem::path cache_dir;
  std::int64_t cache_limit_bytes = 0;
};

// ImageNet's per-channel mean and standard deviation, [1, 3, 1, 1] float: what
// PixelNormalization::ImageNet subtracts and divides by, as torchvision's pretrained models expect.
at::Tensor imagenet_mean();
at::Tensor imagenet_std();

// Model input, float [B, C, H, W], of decoded pixels uint8 [B, C, H, W] (on their device).
at::Tensor model_input(const ImagePreparation& preparation, const at::Tensor& pixels);

// The inverse of model_input for pictures: model input [B, C, H, W] (or one image [C, H, W]) as
// float pixels in [0, 1], clamped.
at::Tensor shown_pixels(const ImagePreparation& preparation, const at::Tensor& input);

}  // namespace wscsl
