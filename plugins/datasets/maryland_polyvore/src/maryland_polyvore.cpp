#include "maryland_polyvore.hpp"

#include <set>

#include <fmt/format.h>

#include "wscsl/data/csv.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::maryland_polyvore {
namespace {

fs::path under_root(const fs::path& root, const std::string& file) {
  return fs::path(file).is_absolute() ? fs::path(file) : root / file;
}

TypeSpaces type_spaces_of(const MarylandPolyvoreOptions& o) {
  const fs::path root = existing_directory(o.root, "Maryland Polyvore root");
  std::set<std::string> types;
  for (const auto& [category, type] : read_category_types(under_root(root, o.category_types)))
    types.insert(type);
  return all_type_pairs({types.begin(), types.end()});
}

// The outfits of a split: <split>_no_dup.json, the validation split's spelled "valid".
fs::path outfit_file(const fs::path& root, Split split) {
  return root / fmt::format("{}_no_dup.json",
                            split == Split::Val ? std::string_view("valid") : split_name(split));
}

}  // namespace

fs::path released_file(const fs::path& root, const std::array<const char*, 2>& names,
                       const std::string& what) {
  std::error_code ec;
  for (const char* name : names)
    if (fs::exists(fs::symlink_status(root / name, ec))) return root / name;
  throw DataError(
      fmt::format("{}: neither {} nor {} is there; expected one of them (the README's "
                  "spelling or the one Han's scripts open)",
                  what, (root / names[0]).string(), (root / names[1]).string()));
}

namespace {

// The file an option names (relative to `root`), else the one of the release that is there.
fs::path chosen_file(const fs::path& root, const std::string& option,
                     const std::array<const char*, 2>& released_names, const std::string& what) {
  const fs::path file =
      option.empty() ? released_file(root, released_names, what) : under_root(root, option);
  require_file(file, what);
  return file;
}

}  // namespace

std::map<std::int64_t, std::string> read_category_types(const fs::path& file) {
  require_file(file, "Maryland Polyvore category types");
  BadRows strict;
  const CsvTable table = read_csv(file, strict);
  const std::int64_t category = table.column("categoryid");
  const std::int64_t type = table.column("type");
  if (category < 0 || type < 0)
    throw DataError(at_line(file, 1,
                            "the header lacks a 'categoryid' or a 'type' column; "
                            "expected categoryid,type"));
  if (table.rows.size() > kMaxCategoryRows)
    throw DataError(at_line(file, table.lines[kMaxCategoryRows],
                            fmt::format("the table has {} rows, more than the {} it may have; "
                                        "expected one per categoryid",
                                        table.rows.size(), kMaxCategoryRows)));
  std::map<std::int64_t, std::string> out;
  std::set<std::string> types;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::string& id_text = table.rows[r][static_cast<std::size_t>(category)];
    const std::string& name = table.rows[r][static_cast<std::size_t>(type)];
    const auto id = parse_integer(id_text);
    if (!id)
      throw DataError(
          at_line(file, table.lines[r],
                  fmt::format("categoryid is {}; expected an integer", quoted_excerpt(id_text))));
    if (name.empty())
      throw DataError(at_line(file, table.lines[r], "type is empty; expected a type name"));
    if (!out.emplace(*id, name).second)
      throw DataError(at_line(file, table.lines[r],
                              fmt::format("categoryid {} is listed again; expected it once", *id)));
    if (types.insert(name).second && types.size() > static_cast<std::size_t>(kMaxItemTypes))
      throw DataError(at_line(file, table.lines[r],
                              fmt::format("type {} is the {}th; expected at most {} item types",
                                          quoted_excerpt(name), types.size(), kMaxItemTypes)));
  }
  if (out.empty())
    throw DataError(at_line(file, 1, "the table has no rows; expected one per categoryid"));
  return out;
}

Schema<MarylandPolyvoreOptions> MarylandPolyvore::schema() {
  using O = MarylandPolyvoreOptions;
  Schema<O> s(
      "Maryland Polyvore (Han et al., ACM MM 2017) in its release's layout: "
      "{train,valid,test}_no_dup.json, images/<set_id>/<index>.jpg, fill_in_the_blank_test.json "
      "(answers[0] is right) and fashion-compatibility-prediction.txt, or Vasileva et al.'s "
      "same-type test files. Coarse types from a categoryid → type table; one condition per "
      "unordered type pair. Every item's text: \"title\" (its name, normalised as Polyvore "
      "Outfits' text key) and \"category\" (its type).");
  s.field("root", &O::root,
          "Directory holding the *_no_dup.json files, images/ and the test files.")
      .path()
      .required();
  s.field("category_types", &O::category_types,
          "CSV with columns categoryid,type giving every category's coarse type (Vasileva et "
          "al.'s mapping is not public); relative to `root`.")
      .required();
  s.field(
      "same_type_compatibility", &O::same_type_compatibility,
      "Vasileva et al.'s same-type compatibility file (the format of compatibility_<split>.txt) "
      "read for the test split instead of fashion-compatibility-prediction.txt; relative to "
      "`root`; empty reads Han's.");
  s.field("same_type_fitb", &O::same_type_fitb,
          "Vasileva et al.'s same-type fill-in-the-blank file (the answer is the candidate of the "
          "question's set_id) read for the test split instead of fill_in_the_blank_test.json; "
          "relative to `root`; empty reads Han's (answers[0] is right).");
  add_outfit_options(s);
  return s;
}

// Beside the split files: Han's release has none; Vasileva et al.'s features of the same titles,
// or the embedded benchmark's, go there.
fs::path MarylandPolyvore::released_text_features() const {
  return root_ / kReleasedTextFeatures;
}

MarylandPolyvore::MarylandPolyvore(const Options& options)
    : OutfitDataset(options, type_spaces_of(options),
                    under_root(options.root, options.category_types)) {
  root_ = existing_directory(options.root, "Maryland Polyvore root");
  category_file_ = under_root(root_, options.category_types);
  category_types_ = read_category_types(category_file_);
  existing_directory(root_ / "images", "Maryland Polyvore image folder");
  FileProblems missing;
  for (Split split : image_splits())
    missing.attempt([&] { require_file(outfit_file(root_, split), "Maryland Polyvore outfits"); });
  missing.attempt([&] {
    compatibility_file_ = chosen_file(root_, options.same_type_compatibility, kCompatibilityFiles,
                                      "Maryland Polyvore compatibility lines");
  });
  missing.attempt([&] {
    blank_file_ = chosen_file(root_, options.same_type_fitb, kBlankFiles,
                              "Maryland Polyvore fill-in-the-blank questions");
  });
  missing.throw_if_any();
  // Han's file: answers[0] is right; Vasileva's same-type file: the candidate of the set_id.
  blank_answer_ = options.same_type_fitb.empty() ? BlankAnswer::First : BlankAnswer::SameOutfit;
  read_files();
}

OutfitCatalog MarylandPolyvore::read_catalog(FileProblems& problems) {
  std::map<Split, fs::path> files;
  for (Split split : image_splits())
    files[split] = outfit_file(root_, split);
  OutfitImages read = outfit_images(files, OutfitLayout::Maryland, root_ / "images", problems);
  OutfitCatalog catalog = std::move(read.catalog);
  for (std::size_t i = 0; i < read.entries.size(); ++i) {
    const auto it = category_types_.find(read.entries[i].category);
    if (it == category_types_.end()) {
      problems.add(fmt::format(
          "{}: the item of index {} has categoryid {}, which {} does not map to a type; "
          "expected a row \"{},<type>\"",
          read.listed_by[i], read.entries[i].index, read.entries[i].category,
          category_file_.string(), read.entries[i].category));
      catalog.item_types.push_back(0);
      catalog.titles.emplace_back();
      catalog.categories.emplace_back();
      continue;
    }
    catalog.item_types.push_back(spaces().type_index(it->second));
    // Han's items have no title or url_name: the text key is the description `name`; the
    // release names no category, so the label is the coarse type the table gives.
    catalog.titles.push_back(normalised_text(read.entries[i].name));
    catalog.categories.push_back(normalised_text(it->second));
  }
  OutfitSplitSource& test = catalog.splits.at(Split::Test);
  test.compatibility = compatibility_file_;
  test.blanks = blank_file_;
  test.answer = blank_answer_;
  return catalog;
}

}  // namespace wscsl::maryland_polyvore

WSCSL_PLUGIN(maryland_polyvore, "0.1.0",
             "Maryland Polyvore (Han et al. 2017): outfit triplets by type pair, compatibility "
             "and fill-in-the-blank") {
  registrar.add<wscsl::Dataset, wscsl::maryland_polyvore::MarylandPolyvore>("maryland_polyvore");
}
