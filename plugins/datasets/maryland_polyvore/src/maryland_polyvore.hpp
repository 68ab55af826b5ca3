// Maryland Polyvore (Han et al., ACM MM 2017) in the layout of its release: outfits of up to 8
// items named <set_id>_<index>, images/<set_id>/<index>.jpg, fine categories only. Coarse types
// come from a table mapping each categoryid to a type (Vasileva et al.'s mapping is not public);
// the conditions are every unordered pair of those types.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

#include "wscsl/data/outfit_dataset.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::maryland_polyvore {

// Han's test files under the two spellings of the release: the README's, then the one his scripts
// open (the README's is read when both are there).
inline constexpr std::array<const char*, 2> kCompatibilityFiles = {
    "fashion-compatibility-prediction.txt", "fashion_compatibility_prediction.txt"};
inline constexpr std::array<const char*, 2> kBlankFiles = {"fill_in_the_blank_test.json",
                                                           "fill_in_blank_test.json"};
// The most rows the categoryid → type table may have (the release has a few hundred categories).
inline constexpr std::size_t kMaxCategoryRows = 65536;

// The one of `names` under `root` that is there (the first when several are), or DataError
// "<what>: neither <root>/a nor <root>/b is there".
std::filesystem::path released_file(const std::filesystem::path& root,
                                    const std::array<const char*, 2>& names,
                                    const std::string& what);

struct MarylandPolyvoreOptions : OutfitDatasetOptions {
  // Not an aggregate: GCC 12 misreads `Options{}` of an aggregate with a base as uninitialized.
  MarylandPolyvoreOptions() {}

  std::string root;
  std::string category_types;
  std::string same_type_compatibility;
  std::string same_type_fitb;
};

// The categoryid → type table: a CSV with columns `categoryid` and `type`, of at most
// kMaxCategoryRows rows naming at most kMaxItemTypes types.
std::map<std::int64_t, std::string> read_category_types(const std::filesystem::path& file);

class MarylandPolyvore final : public OutfitDataset {
 public:
  using Options = MarylandPolyvoreOptions;
  static Schema<Options> schema();
  explicit MarylandPolyvore(const Options& options);

 protected:
  OutfitCatalog read_catalog(FileProblems& problems) override;
  std::filesystem::path released_text_features() const override;

 private:
  std::filesystem::path root_, category_file_, compatibility_file_, blank_file_;
  std::map<std::int64_t, std::string> category_types_;
  BlankAnswer blank_answer_ = BlankAnswer::First;
};

}  // namespace wscsl::maryland_polyvore
