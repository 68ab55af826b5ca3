// Rendering one Fashion-CRB sample: a 28×28 garment on a 32×32 gray texture, tinted, rotated and
// shifted. Pure functions of their inputs.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "wscsl/util/rng.hpp"

namespace wscsl::data {

constexpr int kGarmentSize = 28;
constexpr int kCanvasSize = 32;
constexpr int kNumColors = 6;
constexpr int kNumRotations = 4;
constexpr int kNumBackgrounds = 6;
constexpr int kNumCategories = 10;

// Everything that decides how a sample looks. The first four are the similarity conditions.
struct SampleFactors {
  int category = 0;    // Fashion-MNIST label, 0..9
  int color = 0;       // hue index, 0..5: red, yellow, green, cyan, blue, magenta
  int rotation = 0;    // quarter turns counter-clockwise, 0..3
  int background = 0;  // plain, horizontal, vertical, diagonal stripes, checkerboard, dots
  int period = 4;      // texture period in pixels: 4, 6 or 8
  int phase_x = 0;     // texture phases, 0..period-1
  int phase_y = 0;
  int offset_x = 0;  // garment shift, -2..2
  int offset_y = 0;
};

// Draws the perspective factors and nuisances of one sample, in a fixed order.
SampleFactors draw_factors(Rng& rng, int category);

// Gray value in [0, 1] of the background texture at (x, y).
double background_value(const SampleFactors& f, int x, int y);

// Renders into out[3 * 32 * 32] (channel-major, 0..255): pixel = m·rgb(hue) + (1 − m)·background,
// with m the rotated, shifted garment intensity.
void render(const std::uint8_t* garment, const SampleFactors& factors, std::uint8_t* out);

extern const std::array<const char*, kNumCategories> kCategoryNames;
extern const std::array<const char*, kNumColors> kColorNames;
extern const std::array<const char*, kNumRotations> kRotationNames;
extern const std::array<const char*, kNumBackgrounds> kBackgroundNames;

}  // namespace wscsl::data
