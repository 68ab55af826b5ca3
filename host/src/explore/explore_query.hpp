// What the explorer is asked about, by the name a link, a click or the command line gives it: a
// row of the first index ("17"), a file the index holds (its path, or the end of it: "a/3.png"),
// or an image file given on the command line (`--query photo.png`), which is embedded through
// each run without being added to any index.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "search/explore_source.hpp"

namespace wscsl::host::explore {

struct ExploreQuery {
  std::string key;             // how a link names it: the row as a number, else the image file
  std::int64_t row = -1;       // of the first index; -1 for a file it does not hold
  std::filesystem::path file;  // the image file (canonical), where row is -1
};

class QueryNames {
 public:
  // `given`: the command line's --query arguments, each a row, a file of the index (by path, or
  // the end of its path), or an image file. Throws Error naming an argument that is none of
  // these, or one that names several files of the index, and DataError naming an image file
  // that is not usable.
  QueryNames(search::ExploreSource& first, const std::vector<std::string>& given);

  // The command line's queries, in its order.
  const std::vector<ExploreQuery>& given() const { return given_; }
  // A link's query=NAME: a row, a file of the index, or an image given on the command line (by
  // the path given there, its canonical path, or the end of it). Nothing else on disk is read.
  // Throws Error in one sentence naming what was asked and what may be.
  ExploreQuery resolve(const std::string& name) const;

 private:
  // A row or a file of the index; a refusal names `what` was asked and says the name may also
  // be `otherwise`.
  ExploreQuery in_index(const std::string& name, const std::string& what,
                        const std::string& otherwise) const;

  search::ExploreSource& first_;
  std::vector<ExploreQuery> given_;
  std::vector<std::string> given_as_;  // each given query as the command line spelled it
};

}  // namespace wscsl::host::explore
