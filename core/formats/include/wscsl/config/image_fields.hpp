// The image-size fields a component derives from the dataset (dataset.channels|height|width):
// backbones that read images and losses that reconstruct them declare the same three fields.
#pragma once

#include <cstdint>
#include <string>

#include "wscsl/config/schema.hpp"

namespace wscsl {

// Adds `<prefix>_channels`, `<prefix>_height` and `<prefix>_width`, each at least 1 and derived
// from the dataset's facts (restating a different value is an error).
template <class Options>
void image_fields(Schema<Options>& schema, const std::string& prefix,
                  std::int64_t Options::*channels, std::int64_t Options::*height,
                  std::int64_t Options::*width) {
  schema.field(prefix + "_channels", channels, "Image channels (set from the dataset).")
      .min(1)
      .derived(facts::dataset_channels);
  schema.field(prefix + "_height", height, "Image height (set from the dataset).")
      .min(1)
      .derived(facts::dataset_height);
  schema.field(prefix + "_width", width, "Image width (set from the dataset).")
      .min(1)
      .derived(facts::dataset_width);
}

}  // namespace wscsl
