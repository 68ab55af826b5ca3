// The two network shapes of the CBIR paper (Pérez Rey et al., appendix Tables 1–2), shared by the
// VAE encoder backbone and the decoder of the VAE loss.
#pragma once

#include "wscsl/config/schema.hpp"

namespace wscsl::nn {

enum class VaeArchitecture {
  MnistCrb,    // Table 2: conv 32 and 64, 3×3 stride 2; dense 256 and 128
  ModelNet40,  // Table 1: conv 32, 32, 64, 64, 4×4 stride 2; dense 256
};

inline const EnumChoices<VaeArchitecture>& vae_architecture_choices() {
  static const EnumChoices<VaeArchitecture> choices = {
      {VaeArchitecture::MnistCrb, "mnist_crb",
       "Table 2: conv 32 and 64 (3×3, stride 2), dense 256 and 128; image sides divisible by 4"},
      {VaeArchitecture::ModelNet40, "modelnet40",
       "Table 1: conv 32, 32, 64, 64 (4×4, stride 2), dense 256; image sides divisible by 16"}};
  return choices;
}

}  // namespace wscsl::nn
