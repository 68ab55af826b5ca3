// `wscsl make-triplets` and `wscsl export`: a dataset's triplets written in CSN's layout
// (wscsl/data/csn_layout.hpp), so that other tools — and the `ut_zappos` and `image_folder`
// datasets — train on identical triplets.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "wscsl/plugin/dataset.hpp"

namespace wscsl::host {

struct MakeTripletsOptions {
  std::filesystem::path out;
  // Triplets per condition and split.
  std::int64_t train = 10000;
  std::int64_t val = 2000;
  std::int64_t test = 4000;
  std::int64_t seed = 0;
  double close_within = 0.0;  // numeric conditions (ConditionInfo::numeric)
  double far_beyond = 0.0;
  bool half_reverse = false;  // also write `_half_reverse` lists, half of them reversed
};

// Draws each condition's triplets within each split from the dataset's per-image attributes
// (Dataset::attributes) with the rule of wscsl/data/triplets.hpp and writes <out>/filenames.json
// (the dataset's image files, in id order) and <out>/tripletlists/. Condition k of split s draws
// from its own generator, seeded with mix_seed(mix_seed(seed, s), k). Reports each file on `log`.
void make_triplets(Dataset& dataset, const MakeTripletsOptions& options, std::FILE* log);

// Writes every split of `dataset` to `out`: images/<split>/<id>.png (the dataset's unaugmented
// images, which must lie in [0, 1]), filenames.json listing them split after split,
// tripletlists/<condition>_tripletlist_<split>.txt with the dataset's own triplets, and, when the
// dataset has per-image labels, attributes.csv (file, split, one column per condition) so that
// the `image_folder` dataset reads the export back with `triplets = <out>`.
void export_dataset(Dataset& dataset, const std::filesystem::path& out, std::FILE* log);

}  // namespace wscsl::host
