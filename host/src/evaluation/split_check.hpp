// What a run will read, read before it trains: every split of the dataset is loaded (an image
// dataset opens or builds its image store, so every image of every split is opened), and every
// evaluator's declared need of table rows (Contract::table_rows) and of split content (triplets,
// compatibility lines of both labels, questions: Resource::SplitTriplets ...) is held against
// each split it will evaluate, naming the files the split was read from (SplitData::files); a
// module that scores each triplet by its condition is given a condition for every triplet.
// `wscsl check` and `wscsl train` run it before any step.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/pipeline.hpp"

namespace wscsl::host {

struct SplitSize {
  Split split;
  std::int64_t triplets = 0;   // rows of SplitData::triplets
  std::int64_t evaluated = 0;  // rows of its embedding table: the images the triplets reference
};

// Loads every split and checks the evaluators against them; throws ConfigError naming each
// evaluator table whose settings or needs the splits cannot meet, DataError naming the first
// triplet without a condition (-1) when the module scores by conditions, or the dataset's own
// error (naming the file) for a split that cannot be read.
std::vector<SplitSize> check_splits(Pipeline& pipeline);

// A module that scores each triplet by its condition (Supervision::Conditioned) is given the
// split's conditions as they are: the dataset holds them within [-1, F) (Dataset's contract), and
// an unknown one (-1) is refused here, on the host copy of the split, so that scoring (on a GPU,
// perhaps) never reads a condition back. check_splits runs it on every split, embed_split on the
// split it embeds (so that `eval` and `embed` of a run whose splits were changed refuse alike).
// Throws DataError naming the first such triplet, the split and its files.
void check_conditions_given(const Pipeline& pipeline, Split split, const SplitData& data);

}  // namespace wscsl::host
