#include "cache_command.hpp"

#include <fmt/format.h>

#include "wscsl/data/image_store.hpp"
#include "wscsl/error.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

constexpr double kMiB = 1 << 20;

double mib(const fs::path& file) {
  std::error_code ec;
  const auto bytes = fs::file_size(file, ec);
  return ec ? 0.0 : static_cast<double>(bytes) / kMiB;
}

}  // namespace

int run_cache_list(const CacheArgs& args) {
  const fs::path dir = image_cache_dir(args.cache_dir);
  const std::vector<fs::path> stores = image_stores(dir);
  if (stores.empty()) fmt::print("no image stores in {}\n", dir.string());
  double total = 0;
  for (const fs::path& store : stores) {
    total += mib(store);
    try {
      const StoreManifest m = read_store_manifest(store);
      fmt::print("{}  {:.1f} MiB  {} images of {} px from {}, built {}{}\n", store.string(),
                 mib(store), m.images, m.image_size, m.folder, m.built,
                 m.problems.empty() ? "" : fmt::format(" ({} unusable)", m.problems.size()));
    } catch (const DataError& e) {
      fmt::print("{}  {:.1f} MiB  unreadable: {}\n", store.string(), mib(store), e.what());
    }
    for (const fs::path& temporary : store_temporaries(store))
      fmt::print("{}  {:.1f} MiB  being built, or left by a builder that was killed\n",
                 temporary.string(), mib(temporary));
  }
  if (!stores.empty())
    fmt::print("{} store{}, {:.1f} MiB in {}\n", stores.size(), stores.size() == 1 ? "" : "s",
               total, dir.string());
  return 0;
}

int run_cache_remove(const CacheArgs& args) {
  const fs::path dir = image_cache_dir(args.cache_dir);
  if (args.all == !args.stores.empty())
    throw Error("wscsl cache remove takes either store files or --all");
  std::vector<fs::path> stores = args.all ? image_stores(dir) : args.stores;
  for (fs::path& store : stores) {
    if (store.is_relative() && !store.has_parent_path()) store = dir / store;
    const double size = mib(store);
    remove_image_store(store);
    fmt::print("removed {} ({:.1f} MiB)\n", store.string(), size);
  }
  return 0;
}

}  // namespace wscsl::host
