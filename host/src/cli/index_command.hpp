// `wscsl index`: a folder of images (or a list, or a dataset split) embedded once through a trained
// run into an index that `wscsl search` and `wscsl explore` search (host/src/search/).
#pragma once

#include <filesystem>
#include <string>

#include "command.hpp"
#include "search/indexer.hpp"

namespace wscsl::host {

class IndexCommand final : public Command {
 public:
  explicit IndexCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  search::IndexRequest request_;
  std::filesystem::path images_, list_;
  std::string split_;
  bool strict_ = false;
  bool approximate_ = false;
  bool rebuild_ = false;
};

}  // namespace wscsl::host
