#include "wscsl/data/fashion_render.hpp"

#include <cmath>

namespace wscsl::data {

const std::array<const char*, kNumCategories> kCategoryNames = {
    "t-shirt/top", "trouser", "pullover", "dress", "coat",
    "sandal",      "shirt",   "sneaker",  "bag",   "ankle boot"};
const std::array<const char*, kNumColors> kColorNames = {"red",  "yellow", "green",
                                                         "cyan", "blue",   "magenta"};
const std::array<const char*, kNumRotations> kRotationNames = {"0", "90", "180", "270"};
const std::array<const char*, kNumBackgrounds> kBackgroundNames = {
    "plain", "horizontal stripes", "vertical stripes", "diagonal stripes", "checkerboard", "dots"};

namespace {

constexpr double kLow = 0.2;
constexpr double kHigh = 0.5;
constexpr double kPlain = 0.35;
constexpr int kPeriods[] = {4, 6, 8};
constexpr double kHues[kNumColors][3] = {{1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                         {0, 1, 1}, {0, 0, 1}, {1, 0, 1}};

int positive_mod(int a, int n) {
  return ((a % n) + n) % n;
}

// Source pixel of the garment shown at (x, y) of the 28×28 box after `turns` quarter turns
// counter-clockwise (the same as numpy.rot90).
std::uint8_t rotated(const std::uint8_t* g, int turns, int x, int y) {
  const int n = kGarmentSize - 1;
  switch (turns) {
    case 1:
      return g[x * kGarmentSize + (n - y)];
    case 2:
      return g[(n - y) * kGarmentSize + (n - x)];
    case 3:
      return g[(n - x) * kGarmentSize + y];
    default:
      return g[y * kGarmentSize + x];
  }
}

}  // namespace

SampleFactors draw_factors(Rng& rng, int category) {
  SampleFactors f;
  f.category = category;
  f.color = static_cast<int>(rng.below(kNumColors));
  f.rotation = static_cast<int>(rng.below(kNumRotations));
  f.background = static_cast<int>(rng.below(kNumBackgrounds));
  f.period = kPeriods[rng.below(3)];
  f.phase_x = static_cast<int>(rng.below(static_cast<std::uint64_t>(f.period)));
  f.phase_y = static_cast<int>(rng.below(static_cast<std::uint64_t>(f.period)));
  f.offset_x = static_cast<int>(rng.between(-2, 2));
  f.offset_y = static_cast<int>(rng.between(-2, 2));
  return f;
}

double background_value(const SampleFactors& f, int x, int y) {
  const int p = f.period, half = f.period / 2;
  auto stripe = [&](int coordinate) { return positive_mod(coordinate, p) < half ? kHigh : kLow; };
  switch (f.background) {
    case 1:
      return stripe(y + f.phase_y);
    case 2:
      return stripe(x + f.phase_x);
    case 3:
      return stripe(x + y + f.phase_x);
    case 4:
      return ((x + f.phase_x) / half + (y + f.phase_y) / half) % 2 == 0 ? kHigh : kLow;
    case 5: {
      // Distance to the nearest lattice point {(x, y) : (x + px) ≡ 0, (y + py) ≡ 0 (mod p)}.
      const int dx = positive_mod(x + f.phase_x, p), dy = positive_mod(y + f.phase_y, p);
      const int ex = std::min(dx, p - dx), ey = std::min(dy, p - dy);
      return ex * ex + ey * ey <= 1 ? kHigh : kLow;
    }
    default:
      return kPlain;
  }
}

void render(const std::uint8_t* garment, const SampleFactors& f, std::uint8_t* out) {
  const int left = 2 + f.offset_x, top = 2 + f.offset_y;
  const double* hue = kHues[f.color];
  constexpr int plane = kCanvasSize * kCanvasSize;
  for (int y = 0; y < kCanvasSize; ++y) {
    for (int x = 0; x < kCanvasSize; ++x) {
      const int gx = x - left, gy = y - top;
      const bool inside = gx >= 0 && gx < kGarmentSize && gy >= 0 && gy < kGarmentSize;
      const double m = inside ? rotated(garment, f.rotation, gx, gy) / 255.0 : 0.0;
      const double b = background_value(f, x, y);
      for (int c = 0; c < 3; ++c) {
        const double v = m * hue[c] + (1.0 - m) * b;
        out[c * plane + y * kCanvasSize + x] = static_cast<std::uint8_t>(std::lround(v * 255.0));
      }
    }
  }
}

}  // namespace wscsl::data
