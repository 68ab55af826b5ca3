// Text features computed outside wscsl, keyed by the exact text they were computed from, as
// `text_encoder/precomputed_text` reads them:
//
//   HGLMM text (Vasileva et al.'s train_hglmm_pca6000.txt): one description per line,
//     "<key>,<v1>,<v2>,...,<vF>": the LAST F comma-separated fields are the feature and everything
//     before them (commas included) is the key. Lines are stripped of surrounding whitespace as
//     the released loader does; blank lines are skipped.
//   NumPy: a [N, F] float32 or float64 .npy matrix (wscsl/data/npy.hpp) with a keys file of N
//     lines, line i naming the text of row i.
//
// A key given twice is accepted when both rows hold the same values (kept once) and refused when
// they differ. Every problem is a DataError naming the file and line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "wscsl/data/npy.hpp"

namespace wscsl {

class TextFeatureTable {
 public:
  explicit TextFeatureTable(std::int64_t dim) : dim_(dim) {}

  std::int64_t dim() const { return dim_; }  // F
  std::int64_t size() const { return static_cast<std::int64_t>(keys_.size()); }
  const std::string& key(std::int64_t row) const { return keys_[static_cast<std::size_t>(row)]; }
  // The F values of `row`.
  const float* row(std::int64_t row) const {
    return values_.data() + static_cast<std::size_t>(row * dim_);
  }
  // The row of the text `key` (an exact, byte-for-byte match), or -1.
  std::int64_t find(const std::string& key) const;

  // Adds the F values of `key`, read at `file`:`line`. A key already present with other values
  // throws DataError naming both lines; with the same values it is not added again.
  void add(const std::string& key, const float* values, const std::filesystem::path& file,
           std::int64_t line);

 private:
  std::int64_t dim_;
  std::vector<std::string> keys_;
  std::vector<std::int64_t> lines_;  // where each key was read
  std::vector<float> values_;        // size() × dim_, row-major
  std::unordered_map<std::string, std::int64_t> rows_;
};

// HGLMM features of `dim` values per line from text already read (`file` names it in messages).
// Refused: a line with fewer than `dim` + 1 comma-separated fields or an empty key; a value that
// is not a finite number within float32's range; conflicting duplicate keys; a text without any
// feature line; and a file whose every line has a number just before its last `dim` values (the
// features are longer than `dim`).
TextFeatureTable parse_hglmm_features(const std::string& text, const std::filesystem::path& file,
                                      std::int64_t dim);
// The same, streaming the file line by line (the released file has several gigabytes).
TextFeatureTable read_hglmm_features(const std::filesystem::path& file, std::int64_t dim);

// The keys of an .npy matrix: the lines of `file` (a final line break ends the last line). An
// empty line is refused: every row needs its text.
std::vector<std::string> read_text_keys(const std::filesystem::path& file);

// The rows of `matrix` (read from `matrix_file`) keyed by `keys` (read from `keys_file`), which
// must list exactly one key per row.
TextFeatureTable text_features_from_npy(const NpyMatrix& matrix,
                                        const std::filesystem::path& matrix_file,
                                        const std::vector<std::string>& keys,
                                        const std::filesystem::path& keys_file);

}  // namespace wscsl
