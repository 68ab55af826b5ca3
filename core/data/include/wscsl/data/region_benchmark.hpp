// The region benchmark: a generated attribute-specific retrieval benchmark in the split layout of
// ASEN++ (attribute_split_files.hpp) whose attributes live in regions of the image, so that where
// a model looks matters. Every image has four quadrants, each holding one shape (a square, a disc
// or a cross) in one colour (red, green, blue or yellow) on grey noise, all drawn independently;
// each attribute reads one property of one quadrant, and the other quadrants show the same kinds
// of colours and shapes as distractors. docs/datasets.md describes the generative process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "wscsl/data/image_file.hpp"

namespace wscsl::data {

struct RegionBenchmarkOptions {
  std::int64_t train_images = 512;
  std::int64_t valid_images = 128;
  std::int64_t test_images = 128;
  std::int64_t image_size = 32;  // side of the square images, at least 8
  std::uint64_t seed = 1;
};

// One attribute: which quadrant, which property, and its value names.
struct RegionAttribute {
  std::string name;  // "top_left_color"
  std::vector<std::string> values;
};
// The four attributes, in the files' attribute order: top_left_color, top_right_shape,
// bottom_left_shape, bottom_right_color.
const std::vector<RegionAttribute>& region_attributes();

// What one image shows: per quadrant (top left, top right, bottom left, bottom right) its colour
// index and its shape index.
struct RegionImage {
  int colors[4] = {0, 0, 0, 0};
  int shapes[4] = {0, 0, 0, 0};
  // The value of each attribute of region_attributes().
  std::vector<std::int64_t> attribute_values() const;
};

// What an image drawn from `seed` shows: each quadrant's colour and shape, uniform and
// independent.
RegionImage draw_region_image(std::uint64_t seed);
// The pixels of `image`, `size` pixels square (at least 8), its noise and the shapes' jitter drawn
// from `seed`.
Image8 render_region_image(const RegionImage& image, std::int64_t size, std::uint64_t seed);

// Writes the benchmark into `root` (images/<split>/<n>.png and the split files) unless a complete
// one made with the same options is there (see generated_folder.hpp). Of each evaluation split's
// images a quarter (seeded) are queries and the rest candidates, with a line for every attribute.
void ensure_region_benchmark(const std::filesystem::path& root,
                             const RegionBenchmarkOptions& options);

}  // namespace wscsl::data
