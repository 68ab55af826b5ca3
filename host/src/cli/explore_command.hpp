// `wscsl explore`: the browser page over an index (explore/), or its --static folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipeline/session.hpp"

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

// Adds the subcommand to `app`; `run` runs it when it was parsed.
class ExploreCommand {
 public:
  explicit ExploreCommand(CLI::App& app);
  bool parsed() const { return command_->parsed(); }
  int run(const GlobalOptions& global);

 private:
  CLI::App* command_ = nullptr;
  ExploreArgs args_;
};

}  // namespace wscsl::host
