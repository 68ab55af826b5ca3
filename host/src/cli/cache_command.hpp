// `wscsl cache`: the decoded-image stores of a cache folder, listed or removed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"

namespace wscsl::host {

class CacheCommand final : public Command {
 public:
  explicit CacheCommand(CLI::App& app);
  // `cache list` prints one line per store: its file, its size, what it holds and when it was
  // built (or why it cannot be read), then the temporary files of builders. `cache remove`
  // removes the stores named (or every one, with --all), printing each.
  int run(const Invocation& invocation) override;

 private:
  CLI::App* list_ = nullptr;
  std::string cache_dir_;                      // empty: the default folder (image_cache_dir)
  std::vector<std::filesystem::path> stores_;  // to remove; names are taken in the cache folder
  bool all_ = false;                           // remove every store of the folder
};

}  // namespace wscsl::host
