#include "polyvore_outfits.hpp"

#include <fmt/format.h>

#include "wscsl/data/outfit_benchmark.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::polyvore_outfits {
namespace {

void generate(const PolyvoreOutfitsOptions& o) {
  data::OutfitBenchmarkOptions b;
  switch (o.generate) {
    case Generate::None:
      return;
    case Generate::Tiny:
      b.preset = data::OutfitPreset::Tiny;
      break;
    case Generate::Medium:
      b.preset = data::OutfitPreset::Medium;
      break;
  }
  b.seed = static_cast<std::uint64_t>(o.generator_seed);
  data::ensure_outfit_benchmark(o.root, b);
}

// Every file the layout needs is there, or each one that is not is named.
fs::path checked_folder(const PolyvoreOutfitsOptions& o) {
  const fs::path root = existing_directory(o.root, "Polyvore Outfits root");
  existing_directory(root / "images", "Polyvore Outfits image folder");
  const fs::path folder = existing_directory(split_folder(root, o.split), "Polyvore Outfits split");
  FileProblems missing;
  const auto require = [&](const fs::path& file, const char* what) {
    missing.attempt([&] { require_file(file, what); });
  };
  require(root / kMetadataFile, "Polyvore Outfits item metadata");
  require(folder / kTypeSpacesFile, "Polyvore Outfits type spaces");
  for (Split split : image_splits()) {
    require(folder / (file_split(split) + ".json"), "Polyvore Outfits outfits");
    if (split == Split::Train) continue;
    require(folder / fmt::format("compatibility_{}.txt", file_split(split)),
            "Polyvore Outfits compatibility lines");
    require(folder / fmt::format("fill_in_blank_{}.json", file_split(split)),
            "Polyvore Outfits fill-in-the-blank questions");
  }
  missing.throw_if_any();
  return folder;
}

TypeSpaces read_type_spaces(const PolyvoreOutfitsOptions& o) {
  generate(o);
  const fs::path file = checked_folder(o) / kTypeSpacesFile;
  return type_spaces_from_pairs(read_type_pairs_pickle(file), file);
}

}  // namespace

fs::path split_folder(const fs::path& root, ReleaseSplit split) {
  switch (split) {
    case ReleaseSplit::Nondisjoint:
      return root / "nondisjoint";
    case ReleaseSplit::Disjoint:
      return root / "disjoint";
  }
  return root;
}

std::string file_split(Split split) {
  return split == Split::Val ? "valid" : std::string(split_name(split));
}

Schema<PolyvoreOutfitsOptions> PolyvoreOutfits::schema() {
  using O = PolyvoreOutfitsOptions;
  Schema<O> s(
      "Polyvore Outfits (Vasileva et al., ECCV 2018) in its release's layout: "
      "polyvore_item_metadata.json, images/<item_id>.jpg and per split folder the outfits "
      "({train,valid,test}.json), typespaces.p, compatibility_<split>.txt and "
      "fill_in_blank_<split>.json. Triplets are drawn from the training outfits as the released "
      "loader draws them, conditioned on the type pair. Every item's text: \"title\" (the released "
      "text key: the title, else the url_name, normalised) and \"category\" (its categories.csv "
      "name when that file is there, else its semantic category).");
  s.field("root", &O::root,
          "Directory holding polyvore_item_metadata.json, images/, nondisjoint/ and disjoint/.")
      .path()
      .required();
  s.field("split", &O::split, "Which of the release's two splits to read.",
          EnumChoices<ReleaseSplit>{
              {ReleaseSplit::Nondisjoint, "nondisjoint",
               "outfits split at random: items may occur in training and test outfits"},
              {ReleaseSplit::Disjoint, "disjoint",
               "no test or validation outfit shares an item with "
               "a training outfit"}});
  s.field("generate", &O::generate,
          "Write the embedded outfit benchmark (Fashion-MNIST garments drawn by the Fashion-CRB "
          "renderer from a hidden compatibility process, docs/datasets.md) under `root` first, "
          "unless one made with the same preset and seed is there.",
          EnumChoices<Generate>{
              {Generate::None, "none", "read the files at `root` as they are"},
              {Generate::Tiny, "tiny", "the small preset, for tests and smoke runs"},
              {Generate::Medium, "medium", "the preset the benchmark's results use"}});
  s.field("generator_seed", &O::generator_seed, "Seed of the generated benchmark.")
      .min(0)
      .only_when("generate = \"tiny\" or \"medium\"",
                 [](const O& o) { return o.generate != Generate::None; });
  add_outfit_options(s);
  return s;
}

// The type spaces are read here, so `wscsl check` reports a missing or malformed file.
PolyvoreOutfits::PolyvoreOutfits(const Options& options)
    : OutfitDataset(options, read_type_spaces(options),
                    split_folder(options.root, options.split) / kTypeSpacesFile) {
  root_ = existing_directory(options.root, "Polyvore Outfits root");
  folder_ = split_folder(root_, options.split);
  read_files();
}

// In the split's folder, written for its train split (the release ships it for train only).
fs::path PolyvoreOutfits::released_text_features() const {
  return folder_ / kReleasedTextFeatures;
}

OutfitCatalog PolyvoreOutfits::read_catalog(FileProblems& problems) {
  std::map<Split, fs::path> files;
  for (Split split : image_splits())
    files[split] = folder_ / (file_split(split) + ".json");
  OutfitImages read =
      outfit_images(files, OutfitLayout::PolyvoreOutfits, root_ / "images", problems);
  OutfitCatalog catalog = std::move(read.catalog);
  for (Split split : image_splits()) {
    OutfitSplitSource& src = catalog.splits.at(split);
    const fs::path compatibility = folder_ / fmt::format("compatibility_{}.txt", file_split(split));
    const fs::path blanks = folder_ / fmt::format("fill_in_blank_{}.json", file_split(split));
    // The release has both for training too; the released code evaluates only valid and test.
    const bool train = split == Split::Train;
    problems.attempt([&] {
      if (!train || optional_file_present(compatibility)) src.compatibility = compatibility;
    });
    problems.attempt([&] {
      if (!train || optional_file_present(blanks)) src.blanks = blanks;
    });
    src.answer = BlankAnswer::SameOutfit;
  }

  std::map<std::string, std::string> wanted_by;
  for (std::size_t i = 0; i < read.entries.size(); ++i)
    wanted_by.emplace(read.entries[i].item_id, read.listed_by[i]);
  const fs::path metadata_file = root_ / kMetadataFile;
  std::map<std::string, ItemMetadata> metadata;
  if (!problems.attempt([&] { metadata = read_item_metadata(metadata_file, wanted_by); }))
    return catalog;
  // The category label: the fine-grained name of categories.csv where the release's file is
  // there, else the semantic category.
  const fs::path categories_file = root_ / kCategoriesFile;
  bool fine_names = false;
  std::map<std::string, std::string> category_names;
  if (!problems.attempt([&] {
        fine_names = optional_file_present(categories_file);
        if (fine_names) category_names = read_category_names(categories_file);
      }))
    return catalog;
  for (const OutfitEntry& entry : read.entries) {
    const ItemMetadata& item = metadata.at(entry.item_id);
    const std::int64_t t = spaces().type_index(item.semantic_category);
    if (t < 0)
      problems.add(fmt::format(
          "{}: item {}: 'semantic_category' is {}, which {} does not name; expected one of {}",
          metadata_file.string(), quoted_excerpt(entry.item_id),
          quoted_excerpt(item.semantic_category), (folder_ / kTypeSpacesFile).string(),
          join(spaces().types, ", ")));
    catalog.item_types.push_back(std::max<std::int64_t>(t, 0));
    catalog.titles.push_back(polyvore_text_key(item.title, item.url_name));
    std::string label = item.semantic_category;
    if (fine_names) {
      const auto it = category_names.find(item.category_id);
      if (it == category_names.end()) {
        problems.add(
            fmt::format("{}: item {}: 'category_id' is {}, which {} does not list; expected a row "
                        "\"<category_id>,<fine-grained category>,<semantic category>\"",
                        metadata_file.string(), quoted_excerpt(entry.item_id),
                        quoted_excerpt(item.category_id), categories_file.string()));
      } else {
        label = it->second;
      }
    }
    catalog.categories.push_back(normalised_text(label));
  }
  return catalog;
}

}  // namespace wscsl::polyvore_outfits

WSCSL_PLUGIN(polyvore_outfits, "0.1.0",
             "Polyvore Outfits (Vasileva et al. 2018): outfit triplets by type pair, "
             "compatibility and fill-in-the-blank") {
  registrar.add<wscsl::Dataset, wscsl::polyvore_outfits::PolyvoreOutfits>("polyvore_outfits");
}
