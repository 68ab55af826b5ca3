// `wscsl explore`: the browser page over an index (explore/), or its --static folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"

namespace wscsl::host {

struct ExploreArgs {
  std::filesystem::path target;   // an index, or a run with RUN/index
  std::filesystem::path run;      // target's run, where it moved since it was indexed
  std::filesystem::path compare;  // a second one shown beside it
  std::filesystem::path compare_run;
  std::string host = "127.0.0.1";
  int port = 8765;
  std::filesystem::path static_out;
  std::vector<std::string> queries;  // rows, files of the index, or image files
  std::int64_t k = 10;
  std::vector<std::string> conditions;
};

class ExploreCommand final : public Command {
 public:
  explicit ExploreCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  ExploreArgs args_;
};

}  // namespace wscsl::host
