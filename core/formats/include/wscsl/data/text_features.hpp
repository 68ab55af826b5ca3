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
// A key given again replaces the values read before, as the released loader's dict does: the last
// wins, and the table counts the repeats for a warning. Every problem is a DataError naming the
// file and line.
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

  // Adds the F values of `key`, read at `line`; a key already present takes the new values.
  void add(const std::string& key, const float* values, std::int64_t line);

  // Lines that repeated a key read before, and the first of them ("line 7 repeats the key 'a' of
  // line 2"); empty when none.
  std::int64_t repeated_keys() const { return repeated_; }
  const std::string& first_repeat() const { return first_repeat_; }

 private:
  std::int64_t dim_;
  std::vector<std::string> keys_;
  std::vector<std::int64_t> lines_;  // where each key was read
  std::vector<float> values_;        // size() × dim_, row-major
  std::unordered_map<std::string, std::int64_t> rows_;
  std::int64_t repeated_ = 0;
  std::string first_repeat_;
};

// The bound of an HGLMM line of `dim` values: 64 KiB for the key and 64 bytes per value (Python
// writes a float32 in at most 16).
std::size_t hglmm_max_line_bytes(std::int64_t dim);

// HGLMM features of `dim` values per line from text already read (`file` names it in messages).
// Refused: a line with fewer than `dim` + 1 comma-separated fields or an empty key; a value that
// is not a finite number within float32's range; conflicting duplicate keys; a text without any
// feature line; a line longer than hglmm_max_line_bytes(dim); and a file whose every line has a
// number just before its last `dim` values (the features are longer than `dim`).
TextFeatureTable parse_hglmm_features(const std::string& text, const std::filesystem::path& file,
                                      std::int64_t dim);
// The same, streaming the file line by line (the released file has several gigabytes) with each
// line bounded.
TextFeatureTable read_hglmm_features(const std::filesystem::path& file, std::int64_t dim);

// Appends one HGLMM line "<key>,<v1>,...,<vF>\n" to `out`: "0" for a zero, otherwise the value
// with 4 significant digits (what read_hglmm_features reads back within float32).
void append_hglmm_line(std::string& out, const std::string& key, const std::vector<double>& values);

// The keys of an .npy matrix: the lines of `file` (a final line break ends the last line). An
// empty line is refused: every row needs its text.
std::vector<std::string> read_text_keys(const std::filesystem::path& file);

// The rows of `matrix` (read from `matrix_file`) keyed by `keys` (read from `keys_file`), which
// must list exactly one key per row (a repeated key: the last row wins, as in the HGLMM file).
TextFeatureTable text_features_from_npy(const NpyMatrix& matrix,
                                        const std::filesystem::path& matrix_file,
                                        const std::vector<std::string>& keys,
                                        const std::filesystem::path& keys_file);

}  // namespace wscsl
