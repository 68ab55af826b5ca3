#include "wscsl/plugin/image_preparation.hpp"

#include <torch/types.h>

namespace wscsl {

at::Tensor imagenet_mean() {
  return torch::tensor({0.485, 0.456, 0.406}, torch::kFloat).view({1, 3, 1, 1});
}

at::Tensor imagenet_std() {
  return torch::tensor({0.229, 0.224, 0.225}, torch::kFloat).view({1, 3, 1, 1});
}

at::Tensor model_input(const ImagePreparation& preparation, const at::Tensor& pixels) {
  at::Tensor x = pixels.to(torch::kFloat).div_(255);
  switch (preparation.normalization) {
    case PixelNormalization::ImageNet:
      x.sub_(imagenet_mean().to(x.device())).div_(imagenet_std().to(x.device()));
      break;
    case PixelNormalization::None:
      break;
  }
  return x;
}

at::Tensor shown_pixels(const ImagePreparation& preparation, const at::Tensor& input) {
  at::Tensor x = input.to(torch::kFloat);
  switch (preparation.normalization) {
    case PixelNormalization::ImageNet: {
      // [1, 3, 1, 1] statistics broadcast over a batch [B, 3, H, W] and, as [3, 1, 1], over one
      // image [3, H, W].
      const at::Tensor mean = imagenet_mean().to(x.device()), std = imagenet_std().to(x.device());
      x = input.dim() == 3 ? x * std[0] + mean[0] : x * std + mean;
      break;
    }
    case PixelNormalization::None:
      break;
  }
  return x.clamp(0, 1);
}

}  // namespace wscsl
