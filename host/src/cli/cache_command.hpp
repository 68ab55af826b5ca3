// `wscsl cache`: the decoded-image stores of a cache folder, listed or removed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace wscsl::host {

struct CacheArgs {
  std::string cache_dir;                      // empty: the default folder (image_cache_dir)
  std::vector<std::filesystem::path> stores;  // to remove; names are taken in the cache folder
  bool all = false;                           // remove every store of the folder
};

// Prints one line per store: its file, its size, what it holds and when it was built (or why it
// cannot be read), then the temporary files of builders.
int run_cache_list(const CacheArgs& args);
// Removes the stores named (or every one, with `all`), printing each.
int run_cache_remove(const CacheArgs& args);

}  // namespace wscsl::host
