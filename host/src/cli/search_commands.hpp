// `wscsl index` and `wscsl search`: the command lines of the search library (host/src/search/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipeline/session.hpp"
#include "search/indexer.hpp"
#include "search/searcher.hpp"

namespace wscsl::host {

struct SearchArgs {
  std::filesystem::path index;
  std::filesystem::path run;  // default: the run the index names
  std::filesystem::path query;
  std::int64_t item = -1;
  std::vector<std::string> conditions;  // "all" or none: every condition
  search::SearchOptions options;
  bool json = false;
  std::filesystem::path picture;
};

// Adds both subcommands to `app`; `run` runs whichever was parsed, if one was.
class SearchCommands {
 public:
  explicit SearchCommands(CLI::App& app);
  bool parsed() const;
  int run(const GlobalOptions& global);

 private:
  CLI::App* index_ = nullptr;
  CLI::App* search_ = nullptr;
  search::IndexRequest index_request_;
  std::filesystem::path images_, list_;
  std::string split_;
  bool strict_ = false;
  bool approximate_ = false;
  bool rebuild_ = false;
  SearchArgs search_args_;
};

int run_index(const GlobalOptions& global, const search::IndexRequest& request);
int run_search(const GlobalOptions& global, const SearchArgs& args);

}  // namespace wscsl::host
