// The text of the embedded outfit benchmark: item titles, url names and descriptions, and the
// text features that stand in for the release's HGLMM vectors.
#include <cmath>

#include <fmt/format.h>

#include "plan_parts.hpp"

namespace wscsl::data {
namespace {

const char* const kTextureWords[kNumBackgrounds] = {"plain",    "striped", "pinstripe",
                                                    "bias-cut", "checked", "polka-dot"};
const char* const kCutWords[kNumRotations] = {"classic", "asymmetric", "inverted", "sideways"};
// Two brands are not ASCII (their keys lose those letters, as the released loader's do).
const char* const kBrands[] = {"Aster", "Brio",    "Calla", "Dune",        "Ember",    "Fjord",
                               "Gale",  "Halcyon", "Lumen", "Ma\u00f1ana", "No\u00ebl"};
const char* const kSizes[] = {"size s", "size m", "size l"};

std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words)
    out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

void write_item_text(BenchmarkItem& item, std::uint64_t seed) {
  Rng rng(seed);
  const FineCategory& c = fine_categories()[static_cast<std::size_t>(item.category)];
  std::vector<std::string> words;
  if (rng.uniform() < 0.15) words.emplace_back(kBrands[rng.below(std::size(kBrands))]);
  if (rng.uniform() < 0.3) words.emplace_back(kCutWords[item.factors.rotation]);
  if (rng.uniform() < 0.7)
    words.emplace_back(kColorNames[static_cast<std::size_t>(item.factors.color)]);
  if (rng.uniform() < 0.5) words.emplace_back(kTextureWords[item.factors.background]);
  words.emplace_back(c.name);
  std::string phrase = join_words(words);
  if (rng.uniform() < 0.1) phrase += std::string(", ") + kSizes[rng.below(std::size(kSizes))];
  const double text = rng.uniform();
  // Some titles come padded with a space and a line break, as scraped ones do.
  const bool padded = rng.uniform() < 0.05;
  item.title = text < 0.15 ? "" : (padded ? " " + phrase + "\n" : phrase);
  item.url_name = text < 0.05 ? "" : slug(phrase);
  if (rng.uniform() < 0.5)
    item.description = fmt::format("{} {} with a {} pattern.",
                                   kColorNames[static_cast<std::size_t>(item.factors.color)],
                                   c.name, kTextureWords[item.factors.background]);
}

std::vector<double> text_feature(std::string_view key) {
  constexpr int kValuesPerWord = 8;
  std::vector<double> feature(kTextFeatureSize, 0.0);
  const auto word_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (std::size_t i = 0; i < key.size();) {
    if (!word_char(key[i])) {
      ++i;
      continue;
    }
    std::uint64_t hash = 0xcbf29ce484222325;  // FNV-1a, 64 bits
    for (; i < key.size() && word_char(key[i]); ++i)
      hash = (hash ^ static_cast<unsigned char>(key[i])) * 0x100000001b3;
    Rng rng(mix_seed(kTextFeatureSeed, hash));
    for (int v = 0; v < kValuesPerWord; ++v) {
      const auto at = static_cast<std::size_t>(rng.below(kTextFeatureSize));
      feature[at] += 2 * rng.uniform() - 1;
    }
  }
  double norm = 0;
  for (double x : feature)
    norm += x * x;
  if (norm > 0)
    for (double& x : feature)
      x /= std::sqrt(norm);
  return feature;
}

}  // namespace wscsl::data
