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

void list_stores(const fs::path& dir) {
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
}

void remove_stores(const fs::path& dir, std::vector<fs::path> stores) {
  for (fs::path& store : stores) {
    if (store.is_relative() && !store.has_parent_path()) store = dir / store;
    const double size = mib(store);
    remove_image_store(store);
    fmt::print("removed {} ({:.1f} MiB)\n", store.string(), size);
  }
}

}  // namespace

CacheCommand::CacheCommand(CLI::App& app)
    : Command(app, "cache", "List or remove the stores of decoded images (dataset.cache_dir)") {
  CLI::App& c = subcommand();
  c.require_subcommand(1);
  c.fallthrough();  // --cache-dir after list or remove
  c.add_option("--cache-dir", cache_dir_,
               "The folder of the stores (default: $XDG_CACHE_HOME/wscsl, else ~/.cache/wscsl)");
  list_ = c.add_subcommand("list", "Every store, its size and sources");
  CLI::App* remove =
      c.add_subcommand("remove", "Remove stores (later runs that need one build it again)");
  remove->add_option("stores", stores_, "Store files, or names in the folder");
  remove->add_flag("--all", all_, "Every store of the folder");
}

int CacheCommand::run(const Invocation&) {
  const fs::path dir = image_cache_dir(cache_dir_);
  if (list_->parsed()) {
    list_stores(dir);
    return 0;
  }
  if (all_ == !stores_.empty()) throw Error("wscsl cache remove takes either store files or --all");
  remove_stores(dir, all_ ? image_stores(dir) : stores_);
  return 0;
}

}  // namespace wscsl::host
