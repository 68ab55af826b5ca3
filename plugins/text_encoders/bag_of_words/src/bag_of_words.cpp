#include "bag_of_words.hpp"

#include <torch/nn/functional/embedding.h>

#include "wscsl/config/limits.hpp"
#include "wscsl/nn/distances.hpp"

namespace wscsl::bag_of_words {
namespace {

// 2²² rows: with E = 64, a table of 1 GiB.
constexpr std::int64_t kMaxBuckets = std::int64_t{1} << 22;

bool word_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !word_byte(text[i]))
      ++i;
    std::string word;
    for (; i < text.size() && word_byte(text[i]); ++i)
      word += (text[i] >= 'A' && text[i] <= 'Z') ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
    if (!word.empty()) words.push_back(std::move(word));
  }
  return words;
}

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

Schema<BagOfWordsOptions> BagOfWords::schema() {
  using O = BagOfWordsOptions;
  Schema<O> s(
      "A bag of learned word vectors: the words of each text (runs of ASCII letters and digits, "
      "lower-cased) hashed by FNV-1a into `buckets` rows of a trainable table, pooled and "
      "L2-normalised. No vocabulary file; words that share a bucket share a vector.");
  s.field("buckets", &O::buckets,
          "Rows of the word-vector table; a word uses row FNV-1a-64(word) mod buckets.")
      .min(1)
      .max(static_cast<double>(kMaxBuckets));
  s.field("output_dim", &O::output_dim,
          "E, the size of each word vector and of the text features (the backbone's embedding "
          "size, which the host requires).")
      .min(1)
      .max(kMaxLayerSize)
      .default_from(facts::backbone_embedding_dim);
  s.field("pooling", &O::pooling, "How the word vectors of a text combine.",
          EnumChoices<Pooling>{{Pooling::Mean, "mean", "their average"},
                               {Pooling::Sum, "sum", "their sum"}});
  s.field("normalize", &O::normalize,
          "L2-normalise the pooled vector as v/(‖v‖+1e-10), as the released text branch does.");
  return s;
}

BagOfWords::BagOfWords(const Options& options) : options_(options) {
  // N(0, 1), as torch.nn.Embedding initialises its table.
  weight_ = register_parameter("weight", torch::randn({options.buckets, options.output_dim}));
}

std::int64_t BagOfWords::bucket(std::string_view word) const {
  return static_cast<std::int64_t>(fnv1a64(word) % static_cast<std::uint64_t>(options_.buckets));
}

TextFeatures BagOfWords::encode_impl(const std::vector<std::string>& texts) {
  const auto b = static_cast<std::int64_t>(texts.size());
  std::vector<std::int64_t> rows, offsets;
  torch::Tensor present = torch::empty({b}, torch::kBool);
  auto is_present = present.accessor<bool, 1>();
  offsets.reserve(texts.size());
  for (std::int64_t i = 0; i < b; ++i) {
    offsets.push_back(static_cast<std::int64_t>(rows.size()));
    const std::vector<std::string> words = tokenize(texts[static_cast<std::size_t>(i)]);
    for (const std::string& word : words)
      rows.push_back(bucket(word));
    is_present[i] = !words.empty();
  }
  namespace F = torch::nn::functional;
  auto pooling = F::EmbeddingBagFuncOptions().offsets(
      torch::tensor(offsets, torch::kLong).to(weight_.device()));
  switch (options_.pooling) {
    case Pooling::Mean:
      pooling.mode(torch::kMean);  // an empty bag gives zeros
      break;
    case Pooling::Sum:
      pooling.mode(torch::kSum);
      break;
  }
  torch::Tensor v =
      F::embedding_bag(torch::tensor(rows, torch::kLong).to(weight_.device()), weight_, pooling);
  if (options_.normalize) v = nn::normalize_offset(v, 1);
  return {v, present};
}

}  // namespace wscsl::bag_of_words

WSCSL_PLUGIN(bag_of_words, "0.1.0", "Text features from a bag of learned, hashed word vectors") {
  registrar.add<wscsl::TextEncoder, wscsl::bag_of_words::BagOfWords>("bag_of_words");
}
