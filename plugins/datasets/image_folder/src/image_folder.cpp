#include "image_folder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wscsl/data/csn_layout.hpp"
#include "wscsl/data/csv.hpp"
#include "wscsl/data/triplets.hpp"

namespace fs = std::filesystem;

namespace wscsl::image_folder {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A condition whose known values are all one cannot give any triplet a far image.
void require_two_values(const fs::path& file, const std::string& column,
                        const std::set<std::string>& values) {
  if (values.size() >= 2) return;
  throw DataError(at_line(
      file, 1,
      values.empty()
          ? fmt::format("column '{}' has no value in any row; a condition needs at least two "
                        "values to draw triplets: leave it out of `conditions`",
                        column)
          : fmt::format("column '{}' has the one value '{}' in every row; a condition needs at "
                        "least two values to draw triplets: leave it out of `conditions`",
                        column, *values.begin())));
}

}  // namespace

Schema<ImageFolderOptions> ImageFolder::schema() {
  using O = ImageFolderOptions;
  Schema<O> s(
      "Any folder of images with a CSV of per-image attributes (one column per condition); "
      "triplets drawn from the attributes or read from CSN-layout triplet lists.");
  s.field("root", &O::root, "Image folder: the CSV's file names are relative to it.")
      .path()
      .required();
  s.field("attributes", &O::attributes,
          "CSV file with a header row: a file column, a split column (train, val or test) and "
          "one column per attribute; an empty field is an unknown value.")
      .path()
      .required();
  s.field("file_column", &O::file_column, "The CSV column naming each image's file.");
  s.field("split_column", &O::split_column, "The CSV column naming each image's split.");
  s.field("conditions", &O::conditions,
          "Attribute columns used as conditions, in label order; empty uses every other column "
          "in the CSV's order.");
  s.field("numeric", &O::numeric,
          "Conditions whose values are numbers compared by closeness (as CSN did for heel "
          "height); the others are categories compared by equality.");
  s.field("close_within", &O::close_within,
          "Numeric conditions: the close image's value differs from the anchor's by at most "
          "this.")
      .min(0);
  s.field("far_beyond", &O::far_beyond,
          "Numeric conditions: the far image's value differs from the anchor's by more than "
          "this (at least close_within).")
      .min(0);
  s.field("triplets", &O::triplets,
          "Directory in CSN's layout (filenames.json, tripletlists/<condition>_tripletlist_"
          "<split>.txt) to read the triplets from, e.g. the output of `wscsl make-triplets`; "
          "empty draws them from the attributes.")
      .path();
  s.field("seed", &O::seed, "Seed of the triplets drawn from the attributes.").min(0);
  s.field("train_triplets", &O::train_triplets,
          "Training triplets drawn, equally many per condition.")
      .min(1)
      .max(kMaxTriplets);
  s.field("val_triplets", &O::val_triplets, "Validation triplets drawn.").min(1).max(kMaxTriplets);
  s.field("test_triplets", &O::test_triplets, "Test triplets drawn.").min(1).max(kMaxTriplets);
  add_image_options(s);
  s.check([](const O& o, FieldChecker& c) {
    check_condition_names(o.conditions, "conditions", c);
    if (o.far_beyond < o.close_within)
      c.error("far_beyond", fmt::format("must be at least close_within ({})", o.close_within));
  });
  return s;
}

Contract ImageFolder::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::TripletConditions}, {Resource::ImageFactors}};
  return c;
}

ImageFolder::ImageFolder(const Options& options) : ImageDataset(options), options_(options) {
  // Read now: the conditions' values are part of info(), and `wscsl check` sees bad files.
  image_list();
  if (!options_.triplets.empty()) {
    const fs::path dir = existing_directory(options_.triplets, "triplet directory");
    require_file(dir / kCsnImageList, "triplet image list");
    for (const std::string& condition : conditions_)
      for (Split split : image_splits())
        require_file(csn_triplet_file(dir, condition, split_name(split), false), "triplet list");
  }
}

DatasetInfo ImageFolder::info() const {
  return image_info(labelled_.conditions(), image_splits());
}

ImageList ImageFolder::read_image_list(BadRows& bad) {
  const CsvTable table = read_csv(options_.attributes, bad);
  const auto column_of = [&](const std::string& name, const std::string& option) {
    const std::int64_t c = table.column(name);
    if (c < 0)
      throw DataError(at_line(
          table.file, 1, fmt::format("the header has no column '{}' (option {})", name, option)));
    return static_cast<std::size_t>(c);
  };
  const std::size_t file_column = column_of(options_.file_column, "file_column");
  const std::size_t split_column = column_of(options_.split_column, "split_column");
  conditions_ = options_.conditions;
  if (conditions_.empty())
    for (const std::string& name : table.header)
      if (name != options_.file_column && name != options_.split_column)
        conditions_.push_back(name);
  if (conditions_.empty())
    throw DataError(at_line(table.file, 1, "the header names no attribute column"));
  std::vector<std::size_t> condition_columns;
  for (const std::string& name : conditions_) {
    if (!valid_csn_name(name))
      throw DataError(at_line(
          table.file, 1,
          fmt::format("column '{}' cannot be part of a file name; choose `conditions`", name)));
    condition_columns.push_back(column_of(name, "conditions"));
  }
  for (const std::string& name : options_.numeric)
    if (!contains(conditions_, name))
      throw DataError(fmt::format("option numeric names '{}', which is not a condition ({})", name,
                                  fmt::join(conditions_, ", ")));

  ImageList list;
  list.folder = existing_directory(options_.root, "image folder");
  list.index = table.file;
  // Categorical values are numbered in ascending order of their text, so labels do not depend
  // on the row order.
  std::vector<std::set<std::string>> seen(conditions_.size());
  for (const auto& row : table.rows)
    for (std::size_t k = 0; k < conditions_.size(); ++k)
      if (!contains(options_.numeric, conditions_[k]) && !row[condition_columns[k]].empty())
        seen[k].insert(row[condition_columns[k]]);
  labelled_.value_names.assign(conditions_.size(), {});
  for (std::size_t k = 0; k < conditions_.size(); ++k) {
    if (!contains(options_.numeric, conditions_[k]))
      require_two_values(table.file, conditions_[k], seen[k]);
    labelled_.value_names[k].assign(seen[k].begin(), seen[k].end());
  }
  labelled_.columns.assign(conditions_.size(), {});
  for (std::size_t k = 0; k < conditions_.size(); ++k) {
    AttributeColumn& column = labelled_.columns[k];
    column.name = conditions_[k];
    column.rule.numeric = contains(options_.numeric, conditions_[k]);
    column.rule.close_within = options_.close_within;
    column.rule.far_beyond = options_.far_beyond;
  }
  for (Split split : image_splits())
    labelled_.members[split];
  std::set<std::string> files;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    const std::int64_t line = table.lines[r];
    Split split{};
    if (!parse_split(row[split_column], split)) {
      bad.reject(table.file, line,
                 fmt::format("split '{}' is not train, val or test", row[split_column]));
      continue;
    }
    if (!files.insert(row[file_column]).second) {
      bad.reject(table.file, line, fmt::format("image '{}' is listed twice", row[file_column]));
      continue;
    }
    std::vector<double> values(conditions_.size(), kUnknown);
    bool ok = true;
    for (std::size_t k = 0; k < conditions_.size() && ok; ++k) {
      const std::string& text = row[condition_columns[k]];
      if (text.empty()) continue;
      if (!labelled_.columns[k].rule.numeric) {
        const auto& names = labelled_.value_names[k];
        values[k] =
            static_cast<double>(std::lower_bound(names.begin(), names.end(), text) - names.begin());
      } else if (const auto number = parse_number(text)) {
        values[k] = *number;
      } else {
        bad.reject(table.file, line,
                   fmt::format("column '{}' is '{}', not a number", conditions_[k], text));
        ok = false;
      }
    }
    if (!ok) continue;
    const auto id = static_cast<std::int64_t>(list.entries.size());
    list.entries.push_back({row[file_column], line});
    labelled_.members[split].push_back(id);
    for (std::size_t k = 0; k < conditions_.size(); ++k)
      labelled_.columns[k].values.push_back(values[k]);
  }
  for (const AttributeColumn& column : labelled_.columns) {
    if (!column.rule.numeric) continue;
    std::set<std::string> distinct;
    for (double v : column.values)
      if (!std::isnan(v)) distinct.insert(fmt::format("{}", v));
    require_two_values(table.file, column.name, distinct);
  }
  return list;
}

SplitData ImageFolder::read_split(Split split, const ImageList& images, BadRows& bad) {
  if (!options_.triplets.empty()) return read_triplet_files(split, images, bad);
  const std::int64_t total =
      per_split(split, options_.train_triplets, options_.val_triplets, options_.test_triplets);
  const std::vector<std::int64_t> members = usable(labelled_.members.at(split));
  try {
    SplitData data = labelled_.draw_split(
        members, total, mix_seed(static_cast<std::uint64_t>(options_.seed), split_index(split)));
    data.files.triplets = {options_.attributes};
    return data;
  } catch (const DataError& e) {
    throw DataError(fmt::format("{}: the {} split (its rows of column '{}'): {}",
                                options_.attributes, split_name(split), options_.split_column,
                                e.what()));
  }
}

SplitData ImageFolder::read_triplet_files(Split split, const ImageList& images, BadRows& bad) {
  const fs::path dir = existing_directory(options_.triplets, "triplet directory");
  const fs::path list_file = dir / kCsnImageList;
  std::unordered_map<std::string, std::int64_t> id_of;
  for (std::size_t i = 0; i < images.entries.size(); ++i)
    id_of.emplace(images.entries[i].file, static_cast<std::int64_t>(i));
  // The triplet files' ids index their own image list; -1 marks a file this dataset lacks.
  const std::vector<std::string> listed = read_csn_image_list(list_file);
  std::vector<std::int64_t> local(listed.size(), -1);
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const auto it = id_of.find(listed[i]);
    if (it != id_of.end()) local[i] = it->second;
  }
  std::vector<Triplet> triplets;
  std::vector<fs::path> files;
  for (std::size_t k = 0; k < conditions_.size(); ++k) {
    const fs::path file = csn_triplet_file(dir, conditions_[k], split_name(split), false);
    files.push_back(file);
    for (const CsnTriplet& t :
         read_csn_triplets(file, static_cast<std::int64_t>(listed.size()), list_file, false, bad)) {
      const std::int64_t ids[3] = {local[static_cast<std::size_t>(t.anchor)],
                                   local[static_cast<std::size_t>(t.close)],
                                   local[static_cast<std::size_t>(t.far)]};
      const std::int64_t sources[3] = {t.anchor, t.close, t.far};
      bool ok = true;
      for (int j = 0; j < 3 && ok; ++j)
        if (ids[j] < 0) {
          bad.reject(
              list_file, sources[j] + 1,
              fmt::format("'{}' is not an image of {}",
                          listed[static_cast<std::size_t>(sources[j])], options_.attributes));
          ok = false;
        }
      if (ok) triplets.push_back({ids[0], ids[1], ids[2], static_cast<std::int64_t>(k)});
    }
  }
  SplitData data;
  data.num_images = static_cast<std::int64_t>(images.entries.size());
  std::tie(data.triplets, data.conditions) = triplet_tensors(triplets);
  data.factors = labelled_.factors();
  data.files.triplets = std::move(files);
  return data;
}

std::optional<SplitAttributes> ImageFolder::load_attributes(Split split) {
  return labelled_.attributes(split, image_list());
}

}  // namespace wscsl::image_folder

WSCSL_PLUGIN(image_folder, "0.1.0", "A folder of images with a CSV of per-image attributes") {
  registrar.add<wscsl::Dataset, wscsl::image_folder::ImageFolder>("image_folder");
}
