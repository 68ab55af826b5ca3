// The embedded outfit benchmark's catalogue: coarse types, fine categories and garment forms.
#include <algorithm>

#include "wscsl/data/outfit_benchmark.hpp"

namespace wscsl::data {

const char* item_type_name(ItemType type) {
  switch (type) {
    case ItemType::Accessories:
      return "accessories";
    case ItemType::AllBody:
      return "all-body";
    case ItemType::Bags:
      return "bags";
    case ItemType::Bottoms:
      return "bottoms";
    case ItemType::Hats:
      return "hats";
    case ItemType::Jewellery:
      return "jewellery";
    case ItemType::Outerwear:
      return "outerwear";
    case ItemType::Scarves:
      return "scarves";
    case ItemType::Shoes:
      return "shoes";
    case ItemType::Sunglasses:
      return "sunglasses";
    case ItemType::Tops:
      return "tops";
  }
  return "";
}

const std::vector<FineCategory>& fine_categories() {
  using T = ItemType;
  using F = GarmentForm;
  // Fashion-MNIST classes: 0 t-shirt/top, 1 trouser, 2 pullover, 3 dress, 4 coat, 5 sandal,
  // 6 shirt, 7 sneaker, 8 bag, 9 ankle boot. No two categories share a (class, form).
  static const std::vector<FineCategory> categories = {
      {1, "t-shirt", T::Tops, 0, F::Full},
      {2, "pullover", T::Tops, 2, F::Full},
      {3, "shirt", T::Tops, 6, F::Full},
      {4, "tank top", T::Tops, 0, F::Narrow},
      {5, "trousers", T::Bottoms, 1, F::Full},
      {6, "shorts", T::Bottoms, 1, F::Wide},
      {7, "skirt", T::Bottoms, 3, F::Wide},
      {8, "dress", T::AllBody, 3, F::Full},
      {9, "gown", T::AllBody, 3, F::Narrow},
      {10, "shirt dress", T::AllBody, 6, F::Narrow},
      {11, "coat", T::Outerwear, 4, F::Full},
      {12, "jacket", T::Outerwear, 4, F::Wide},
      {13, "cardigan", T::Outerwear, 2, F::Narrow},
      {14, "sandals", T::Shoes, 5, F::Full},
      {15, "sneakers", T::Shoes, 7, F::Full},
      {16, "ankle boots", T::Shoes, 9, F::Full},
      {17, "handbag", T::Bags, 8, F::Full},
      {18, "clutch", T::Bags, 8, F::Wide},
      {19, "backpack", T::Bags, 8, F::Narrow},
      {20, "beanie", T::Hats, 8, F::Half},
      {21, "cap", T::Hats, 0, F::Half},
      {22, "earrings", T::Jewellery, 5, F::Pair},
      {23, "bracelets", T::Jewellery, 8, F::Pair},
      {24, "pendant", T::Jewellery, 5, F::Half},
      {25, "sunglasses", T::Sunglasses, 7, F::Pair},
      {26, "aviators", T::Sunglasses, 9, F::Pair},
      {27, "scarf", T::Scarves, 1, F::Narrow},
      {28, "shawl", T::Scarves, 4, F::Narrow},
      {29, "watch", T::Accessories, 7, F::Half},
      {30, "belt", T::Accessories, 1, F::Half},
      {31, "gloves", T::Accessories, 6, F::Pair},
  };
  return categories;
}

void reshape_garment(const std::uint8_t* g, GarmentForm form, std::uint8_t* out) {
  constexpr int n = kGarmentSize, h = kGarmentSize / 2;
  std::fill(out, out + n * n, std::uint8_t{0});
  // Mean of the source pixels (x0..x0+sx) × (y0..y0+sy), rounded.
  auto mean = [&](int x0, int y0, int sx, int sy) {
    int sum = 0;
    for (int y = y0; y < y0 + sy; ++y)
      for (int x = x0; x < x0 + sx; ++x)
        sum += g[y * n + x];
    const int count = sx * sy;
    return static_cast<std::uint8_t>((sum + count / 2) / count);
  };
  switch (form) {
    case GarmentForm::Full:
      std::copy(g, g + n * n, out);
      return;
    case GarmentForm::Half:
    case GarmentForm::Pair:
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < h; ++x) {
          const std::uint8_t v = mean(2 * x, 2 * y, 2, 2);
          if (form == GarmentForm::Half) {
            out[(y + h / 2) * n + x + h / 2] = v;
          } else {
            out[(y + h / 2) * n + x] = v;
            out[(y + h / 2) * n + x + h] = v;
          }
        }
      }
      return;
    case GarmentForm::Wide:
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < n; ++x)
          out[(y + h / 2) * n + x] = mean(x, 2 * y, 1, 2);
      return;
    case GarmentForm::Narrow:
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < h; ++x)
          out[y * n + x + h / 2] = mean(2 * x, y, 2, 1);
      return;
  }
}

}  // namespace wscsl::data
