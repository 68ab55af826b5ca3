// `wscsl search`: the nearest images of an index to a query under each condition, ranked by the
// run's condition module (host/src/search/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"
#include "search/searcher.hpp"

namespace wscsl::host {

class SearchCommand final : public Command {
 public:
  explicit SearchCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path index_;
  std::filesystem::path run_;  // default: the run the index names
  std::filesystem::path query_;
  std::int64_t item_ = -1;
  std::vector<std::string> conditions_;  // "all" or none: every condition
  search::SearchOptions options_;
  bool approximate_ = false;
  bool json_ = false;
  std::filesystem::path picture_;
};

}  // namespace wscsl::host
