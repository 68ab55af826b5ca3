// A bag of learned word vectors: each text's words are hashed into one of `buckets` rows of a
// trainable table [buckets, E], and the text's feature is their mean (or sum), L2-normalised.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wscsl/sdk.hpp"

namespace wscsl::bag_of_words {

enum class Pooling { Mean, Sum };

struct BagOfWordsOptions {
  std::int64_t buckets = 4096;
  std::int64_t output_dim = 0;  // E, from the backbone
  Pooling pooling = Pooling::Mean;
  bool normalize = true;
};

// The words of `text`: maximal runs of ASCII letters and digits, lower-cased; every other byte
// (punctuation, spaces, bytes of non-ASCII UTF-8 characters) separates words.
std::vector<std::string> tokenize(std::string_view text);

// FNV-1a, 64 bits: h = 14695981039346656037; for each byte, h = (h XOR byte) · 1099511628211.
std::uint64_t fnv1a64(std::string_view bytes);

class BagOfWords final : public TextEncoder {
 public:
  using Options = BagOfWordsOptions;
  static Schema<Options> schema();
  explicit BagOfWords(const Options& options);

  std::int64_t output_dim() const override { return options_.output_dim; }
  // The row of the table that `word` uses: fnv1a64(word) mod buckets.
  std::int64_t bucket(std::string_view word) const;

 protected:
  TextFeatures encode_impl(const std::vector<std::string>& texts) override;

 private:
  Options options_;
  torch::Tensor weight_;  // [buckets, E]
};

}  // namespace wscsl::bag_of_words
