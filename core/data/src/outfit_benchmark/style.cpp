// The hidden process's style: which attributes each type expresses, and how (in)compatible items
// and outfits are.
#include "plan_parts.hpp"

namespace wscsl::data {

int attribute_of(const SampleFactors& f, StyleAttribute a) {
  switch (a) {
    case StyleAttribute::Colour:
      return f.color;
    case StyleAttribute::Texture:
      return f.background;
    case StyleAttribute::Cut:
      return f.rotation;
  }
  return 0;
}

std::array<StyleAttribute, 2> expressed_attributes(ItemType type) {
  using A = StyleAttribute;
  switch (type) {
    case ItemType::Tops:
    case ItemType::AllBody:
    case ItemType::Hats:
    case ItemType::Sunglasses:
      return {A::Colour, A::Cut};
    case ItemType::Bottoms:
    case ItemType::Bags:
    case ItemType::Jewellery:
    case ItemType::Scarves:
      return {A::Colour, A::Texture};
    case ItemType::Outerwear:
    case ItemType::Shoes:
    case ItemType::Accessories:
      return {A::Texture, A::Cut};
  }
  return {A::Colour, A::Texture};
}

double hidden_dissimilarity(const BenchmarkItem& a, const BenchmarkItem& b) {
  const auto ea = expressed_attributes(a.type), eb = expressed_attributes(b.type);
  int shared = 0, differing = 0;
  for (StyleAttribute x : ea) {
    if (x != eb[0] && x != eb[1]) continue;
    ++shared;
    if (attribute_of(a.factors, x) != attribute_of(b.factors, x)) ++differing;
  }
  return static_cast<double>(differing) / shared;
}

double hidden_outfit_score(const std::vector<const BenchmarkItem*>& items) {
  double sum = 0;
  int pairs = 0;
  for (std::size_t i = 0; i < items.size(); ++i)
    for (std::size_t j = i + 1; j < items.size(); ++j, ++pairs)
      sum += hidden_dissimilarity(*items[i], *items[j]);
  return pairs == 0 ? 0.0 : sum / pairs;
}

}  // namespace wscsl::data
