#include "wscsl/data/region_benchmark.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "wscsl/data/attribute_split_files.hpp"
#include "wscsl/data/generated_folder.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;

namespace wscsl::data {
namespace {

constexpr int kFormatVersion = 1;
constexpr int kColors = 4;
constexpr int kShapes = 3;
constexpr std::uint8_t kPalette[kColors][3] = {
    {220, 40, 40}, {40, 190, 60}, {50, 80, 230}, {230, 210, 40}};
// Streams of randomness: what each image shows, its pixels, and the query/candidate partition.
constexpr std::uint64_t kContentStream = 1;
constexpr std::uint64_t kPixelStream = 2;
constexpr std::uint64_t kQueryStream = 3;

enum Quadrant { TopLeft, TopRight, BottomLeft, BottomRight };

// Whether (x, y), relative to the shape's centre, lies in a shape of half-side `r`.
bool inside(int shape, double x, double y, double r) {
  switch (shape) {
    case 0:  // square
      return std::abs(x) <= r && std::abs(y) <= r;
    case 1:  // disc
      return x * x + y * y <= r * r;
    default:  // cross: two bars a third of the side wide
      return (std::abs(x) <= r && std::abs(y) <= r / 3) ||
             (std::abs(y) <= r && std::abs(x) <= r / 3);
  }
}

std::string stamp_text(const RegionBenchmarkOptions& o) {
  return fmt::format("wscsl region benchmark {}\nimages {} {} {}\nimage_size {}\nseed {}\n",
                     kFormatVersion, o.train_images, o.valid_images, o.test_images, o.image_size,
                     o.seed);
}

void write_benchmark(const fs::path& dir, const RegionBenchmarkOptions& o) {
  const std::int64_t counts[3] = {o.train_images, o.valid_images, o.test_images};
  const char* splits[3] = {"train", "valid", "test"};
  std::vector<std::int64_t> value_counts;
  for (const RegionAttribute& a : region_attributes())
    value_counts.push_back(static_cast<std::int64_t>(a.values.size()));
  std::uint64_t image_number = 0;
  for (int s = 0; s < 3; ++s) {
    create_folder(dir / "images" / splits[s]);
    std::vector<std::string> paths;
    std::vector<RegionImage> shown;
    for (std::int64_t i = 0; i < counts[s]; ++i, ++image_number) {
      const std::string path = fmt::format("images/{}/{}.png", splits[s], i);
      const RegionImage image =
          draw_region_image(mix_seed(mix_seed(o.seed, kContentStream), image_number));
      write_image_file(dir / path,
                       render_region_image(image, o.image_size,
                                           mix_seed(mix_seed(o.seed, kPixelStream), image_number)));
      paths.push_back(path);
      shown.push_back(image);
    }
    write_attribute_image_list(attribute_image_list(dir, splits[s]), paths);
    const auto lines_of = [&](std::int64_t i) {
      std::vector<AttributeLine> lines;
      const std::vector<std::int64_t> values =
          shown[static_cast<std::size_t>(i)].attribute_values();
      for (std::size_t a = 0; a < values.size(); ++a)
        lines.push_back({i, static_cast<std::int64_t>(a), values[a], 0});
      return lines;
    };
    if (s == 0) {
      std::vector<AttributeLine> labels;
      for (std::int64_t i = 0; i < counts[s]; ++i)
        for (const AttributeLine& l : lines_of(i))
          labels.push_back(l);
      write_attribute_labels(attribute_label_file(dir), labels);
      continue;
    }
    // A seeded quarter of the images (at least one) are queries, the rest candidates.
    const std::vector<std::int64_t> order = seeded_permutation(
        mix_seed(mix_seed(o.seed, kQueryStream), static_cast<std::uint64_t>(s)), counts[s]);
    const std::int64_t queries = std::max<std::int64_t>(1, counts[s] / 4);
    std::vector<std::int64_t> query_images(order.begin(), order.begin() + queries);
    std::vector<std::int64_t> candidate_images(order.begin() + queries, order.end());
    std::sort(query_images.begin(), query_images.end());
    std::sort(candidate_images.begin(), candidate_images.end());
    const auto lines = [&](const std::vector<std::int64_t>& images) {
      std::vector<AttributeLine> out;
      for (std::int64_t i : images)
        for (const AttributeLine& l : lines_of(i))
          out.push_back(l);
      return out;
    };
    const AttributeSplit split = s == 1 ? AttributeSplit::Valid : AttributeSplit::Test;
    write_attribute_queries(attribute_query_file(dir, split), lines(query_images));
    write_attribute_queries(attribute_candidate_file(dir, split), lines(candidate_images));
  }
}

}  // namespace

const std::vector<RegionAttribute>& region_attributes() {
  static const std::vector<std::string> colors = {"red", "green", "blue", "yellow"};
  static const std::vector<std::string> shapes = {"square", "disc", "cross"};
  static const std::vector<RegionAttribute> attributes = {{"top_left_color", colors},
                                                          {"top_right_shape", shapes},
                                                          {"bottom_left_shape", shapes},
                                                          {"bottom_right_color", colors}};
  return attributes;
}

std::vector<std::int64_t> RegionImage::attribute_values() const {
  return {colors[TopLeft], shapes[TopRight], shapes[BottomLeft], colors[BottomRight]};
}

RegionImage draw_region_image(std::uint64_t seed) {
  Rng rng(seed);
  RegionImage image;
  for (int q = 0; q < 4; ++q) {
    image.colors[q] = static_cast<int>(rng.below(kColors));
    image.shapes[q] = static_cast<int>(rng.below(kShapes));
  }
  return image;
}

Image8 render_region_image(const RegionImage& image, std::int64_t size, std::uint64_t seed) {
  if (size < 8)
    throw Error(
        fmt::format("the region benchmark's images need at least 8 pixels a side, got {}", size));
  Rng rng(seed);
  const int side = static_cast<int>(size);
  Image8 out;
  out.width = out.height = side;
  out.pixels.resize(static_cast<std::size_t>(side) * side * 3);
  for (std::uint8_t& p : out.pixels)
    p = static_cast<std::uint8_t>(60 + rng.below(41));
  const double half = side / 2.0;
  for (int q = 0; q < 4; ++q) {
    // The shape's centre moves by up to an eighth of the quadrant; its half-side is 0.3 of it.
    const double r = 0.3 * half;
    const double cx = (q % 2 + 0.5) * half + (rng.uniform() - 0.5) * half / 4;
    const double cy = (q / 2 + 0.5) * half + (rng.uniform() - 0.5) * half / 4;
    const std::uint8_t* colour = kPalette[image.colors[q]];
    for (int y = static_cast<int>((q / 2) * half); y < static_cast<int>((q / 2 + 1) * half); ++y)
      for (int x = static_cast<int>((q % 2) * half); x < static_cast<int>((q % 2 + 1) * half); ++x)
        if (inside(image.shapes[q], x + 0.5 - cx, y + 0.5 - cy, r))
          std::copy(colour, colour + 3, out.row(y) + 3 * x);
  }
  return out;
}

void ensure_region_benchmark(const fs::path& root, const RegionBenchmarkOptions& options) {
  if (options.train_images < 2 || options.valid_images < 2 || options.test_images < 2)
    throw Error(
        fmt::format("the region benchmark needs at least 2 images in each split, got {}, "
                    "{} and {}",
                    options.train_images, options.valid_images, options.test_images));
  ensure_generated_folder(root, {"region_benchmark", "region benchmark", stamp_text(options)},
                          [&](const fs::path& staging) { write_benchmark(staging, options); });
}

}  // namespace wscsl::data
