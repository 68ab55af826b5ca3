// Maryland Polyvore (Han et al., ACM MM 2017) in the layout of its release: outfits of up to 8
// items named <set_id>_<index>, images/<set_id>/<index>.jpg, fine categories only. Coarse types
// come from a table mapping each categoryid to a type (Vasileva et al.'s mapping is not public);
// the conditions are every unordered pair of those types.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "wscsl/data/outfit_dataset.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::maryland_polyvore {

inline constexpr const char* kCompatibilityFile = "fashion-compatibility-prediction.txt";
inline constexpr const char* kBlankFile = "fill_in_the_blank_test.json";

struct MarylandPolyvoreOptions : OutfitDatasetOptions {
  // Not an aggregate: GCC 12 misreads `Options{}` of an aggregate with a base as uninitialized.
  MarylandPolyvoreOptions() {}

  std::string root;
  std::string category_types;
  std::string same_type_compatibility;
  std::string same_type_fitb;
};

// The categoryid → type table: a CSV with columns `categoryid` and `type`.
std::map<std::int64_t, std::string> read_category_types(const std::filesystem::path& file);

class MarylandPolyvore final : public OutfitDataset {
 public:
  using Options = MarylandPolyvoreOptions;
  static Schema<Options> schema();
  explicit MarylandPolyvore(const Options& options);

 protected:
  OutfitCatalog read_catalog() override;
  std::filesystem::path released_text_features() const override;

 private:
  std::filesystem::path root_, category_file_;
  std::map<std::int64_t, std::string> category_types_;
  std::string same_type_compatibility_, same_type_fitb_;
};

}  // namespace wscsl::maryland_polyvore
