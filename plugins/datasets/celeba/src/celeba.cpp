#include "celeba.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "wscsl/data/triplets.hpp"

namespace fs = std::filesystem;

namespace wscsl::celeba {
namespace {

constexpr const char* kAttributeFile = "list_attr_celeba.txt";
constexpr const char* kPartitionFile = "list_eval_partition.txt";

}  // namespace

const std::array<MergedCondition, 5> kMergedConditions = {{
    {"Hair_Color", 5, {"Black_Hair", "Blond_Hair", "Brown_Hair", "Gray_Hair"}},
    {"Hair_Type", 7, {"Bangs", "Receding_Hairline", "Straight_Hair", "Wavy_Hair"}},
    {"Eye_And_Eyebrow", 6, {"Arched_Eyebrows", "Bags_Under_Eyes", "Bushy_Eyebrows", "Narrow_Eyes"}},
    {"Accessories", 6, {"Wearing_Earrings", "Wearing_Hat", "Wearing_Necklace", "Wearing_Necktie"}},
    {"Nose_And_Mouth", 7, {"Big_Lips", "Big_Nose", "Mouth_Slightly_Open", "Pointy_Nose"}},
}};

std::pair<std::vector<double>, std::vector<unsigned>> merge_codes(
    const std::vector<unsigned>& codes, std::size_t values) {
  std::map<unsigned, std::int64_t> frequency;
  for (unsigned c : codes)
    ++frequency[c];
  std::vector<std::pair<std::int64_t, unsigned>> ranked;
  for (const auto& [code, n] : frequency)
    ranked.emplace_back(-n, code);
  std::sort(ranked.begin(), ranked.end());
  std::vector<unsigned> kept;
  std::map<unsigned, double> value_of;
  for (std::size_t i = 0; i < ranked.size() && i < values; ++i) {
    kept.push_back(ranked[i].second);
    value_of[ranked[i].second] = static_cast<double>(i);
  }
  std::vector<double> out;
  out.reserve(codes.size());
  for (unsigned c : codes) {
    const auto it = value_of.find(c);
    out.push_back(it == value_of.end() ? -1.0 : it->second);
  }
  return {out, kept};
}

std::string code_name(const MergedCondition& c, unsigned code) {
  std::string name;
  for (std::size_t i = 0; i < c.attributes.size(); ++i)
    if (code & (1u << i)) {
      if (!name.empty()) name += '+';
      name += c.attributes[i];
    }
  return name.empty() ? "none" : name;
}

Schema<CelebaOptions> Celeba::schema() {
  using O = CelebaOptions;
  Schema<O> s(
      "Celeb-A (list_attr_celeba.txt, list_eval_partition.txt, img_align_celeba/) with "
      "DiscoverNet's protocol: triplets drawn per condition within each official partition; "
      "binary attributes or Celeb-A†'s 5 merged multi-valued conditions.");
  s.field("root", &O::root,
          "Directory holding list_attr_celeba.txt, list_eval_partition.txt and the image folder.")
      .path()
      .required();
  s.field("images", &O::images, "Image folder, relative to `root` unless absolute.");
  s.field("variant", &O::variant,
          "\"attributes\": one binary condition per name in `conditions`; \"merged\": Celeb-A†, "
          "the 5 conditions of the DiscoverNet supplementary's Table 1 (see the README for the "
          "merge rule).",
          EnumChoices<Variant>{
              {Variant::Attributes, "attributes", "one binary condition per listed attribute"},
              {Variant::Merged, "merged", "Celeb-A†: 5 conditions merged from 20 attributes"}});
  s.field("conditions", &O::conditions,
          "Attributes used as conditions (variant \"attributes\"), as spelled in the header of "
          "list_attr_celeba.txt; the default is the paper's 8.");
  s.field("seed", &O::seed, "Seed of the drawn triplets.").min(0);
  s.field("train_triplets", &O::train_triplets,
          "Training triplets, equally many per condition (DiscoverNet: 400,000).")
      .min(1)
      .max(kMaxTriplets);
  s.field("val_triplets", &O::val_triplets, "Validation triplets (DiscoverNet: 80,000).")
      .min(1)
      .max(kMaxTriplets);
  s.field("test_triplets", &O::test_triplets, "Test triplets (DiscoverNet: 160,000).")
      .min(1)
      .max(kMaxTriplets);
  add_image_options(s);
  s.check([](const O& o, FieldChecker& c) {
    if (o.variant == Variant::Attributes && o.conditions.empty())
      c.error("conditions", "needs at least one attribute");
    check_condition_names(o.conditions, "conditions", c);
  });
  return s;
}

Contract Celeba::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::TripletConditions}, {Resource::ImageFactors}};
  return c;
}

Celeba::Celeba(const Options& options) : ImageDataset(options), options_(options) {
  root_ = existing_directory(options.root, "Celeb-A root");
  require_file(root_ / kAttributeFile, "Celeb-A attribute list");
  require_file(root_ / kPartitionFile, "Celeb-A partition list");
  existing_directory(root_ / options.images, "Celeb-A image folder");
  image_list();  // the conditions' values are part of info()
}

DatasetInfo Celeba::info() const {
  return image_info(labelled_.conditions(), image_splits());
}

ImageList Celeba::read_image_list(BadRows& bad) {
  const fs::path attribute_file = root_ / kAttributeFile;
  const std::vector<std::string> lines = read_lines(attribute_file);
  if (lines.size() < 2)
    throw DataError(
        at_line(attribute_file, static_cast<std::int64_t>(lines.size()) + 1,
                "expected the image count on line 1 and the attribute names on line 2"));
  const auto declared = parse_id(lines[0]);
  if (!declared)
    throw DataError(
        at_line(attribute_file, 1, fmt::format("expected the image count, found '{}'", lines[0])));
  std::vector<std::string> header;
  for (std::string_view t : tokens(lines[1]))
    header.emplace_back(t);
  const auto column_of = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end())
      throw DataError(at_line(attribute_file, 2, fmt::format("no attribute '{}'", name)));
    return static_cast<std::size_t>(it - header.begin());
  };

  // Each condition reads a group of attribute columns: one (binary) or four (merged).
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::string> names;
  switch (options_.variant) {
    case Variant::Merged:
      for (const MergedCondition& m : kMergedConditions) {
        names.push_back(m.name);
        groups.emplace_back();
        for (const char* a : m.attributes)
          groups.back().push_back(column_of(a));
      }
      break;
    case Variant::Attributes:
      for (const std::string& name : options_.conditions) {
        names.push_back(name);
        groups.push_back({column_of(name)});
      }
      break;
  }

  ImageList list;
  list.folder = existing_directory(root_ / options_.images, "Celeb-A image folder");
  list.index = attribute_file;
  std::vector<std::vector<unsigned>> codes(groups.size());
  std::unordered_map<std::string, std::int64_t> id_of;
  std::int64_t rows = 0;
  for (std::size_t i = 2; i < lines.size(); ++i) {
    const auto line = static_cast<std::int64_t>(i + 1);
    const std::vector<std::string_view> t = tokens(lines[i]);
    if (t.empty()) continue;
    ++rows;
    if (t.size() != header.size() + 1) {
      bad.reject(attribute_file, line,
                 fmt::format("expected {} columns (the file name and {} attributes), found {}",
                             header.size() + 1, header.size(), t.size()));
      continue;
    }
    bool ok = true;
    for (std::size_t c = 1; c < t.size() && ok; ++c)
      if (t[c] != "1" && t[c] != "-1") {
        bad.reject(attribute_file, line,
                   fmt::format("attribute {} is '{}'; expected 1 or -1", header[c - 1], t[c]));
        ok = false;
      }
    if (!ok) continue;
    const std::string file(t[0]);
    if (!id_of.emplace(file, static_cast<std::int64_t>(list.entries.size())).second) {
      bad.reject(attribute_file, line, fmt::format("image '{}' is listed twice", file));
      continue;
    }
    list.entries.push_back({file, line});
    for (std::size_t k = 0; k < groups.size(); ++k) {
      unsigned code = 0;
      for (std::size_t b = 0; b < groups[k].size(); ++b)
        if (t[groups[k][b] + 1] == "1") code |= 1u << b;
      codes[k].push_back(code);
    }
  }
  if (rows != static_cast<std::int64_t>(*declared))
    throw DataError(at_line(attribute_file, 1,
                            fmt::format("declares {} images but {} rows follow", *declared, rows)));

  labelled_.columns.assign(groups.size(), {});
  labelled_.value_names.assign(groups.size(), {});
  for (std::size_t k = 0; k < groups.size(); ++k) {
    AttributeColumn& column = labelled_.columns[k];
    column.name = names[k];
    switch (options_.variant) {
      case Variant::Merged: {
        auto [values, kept] = merge_codes(codes[k], kMergedConditions[k].values);
        column.values = std::move(values);
        for (unsigned code : kept)
          labelled_.value_names[k].push_back(code_name(kMergedConditions[k], code));
        break;
      }
      case Variant::Attributes:
        column.values.assign(codes[k].begin(), codes[k].end());
        labelled_.value_names[k] = {"no", "yes"};
        break;
    }
  }

  // The official partition: 0 train, 1 val, 2 test.
  const fs::path partition_file = root_ / kPartitionFile;
  const std::vector<std::string> partition = read_lines(partition_file);
  for (Split split : image_splits())
    labelled_.members[split];
  std::vector<bool> placed(list.entries.size(), false);
  for (std::size_t i = 0; i < partition.size(); ++i) {
    const auto line = static_cast<std::int64_t>(i + 1);
    const std::vector<std::string_view> t = tokens(partition[i]);
    if (t.empty()) continue;
    if (t.size() != 2) {
      bad.reject(partition_file, line,
                 fmt::format("expected 2 columns (file, partition), found {}", t.size()));
      continue;
    }
    const auto split = parse_id(t[1]);
    if (!split || *split > 2) {
      bad.reject(partition_file, line, fmt::format("partition '{}' is not 0, 1 or 2", t[1]));
      continue;
    }
    const auto it = id_of.find(std::string(t[0]));
    if (it == id_of.end()) {
      bad.reject(partition_file, line,
                 fmt::format("image '{}' is not in {}", t[0], attribute_file.string()));
      continue;
    }
    if (placed[static_cast<std::size_t>(it->second)]) {
      bad.reject(partition_file, line, fmt::format("image '{}' is listed twice", t[0]));
      continue;
    }
    placed[static_cast<std::size_t>(it->second)] = true;
    labelled_.members[image_splits()[static_cast<std::size_t>(*split)]].push_back(it->second);
  }
  for (auto& [split, ids] : labelled_.members)
    std::sort(ids.begin(), ids.end());
  return list;
}

SplitData Celeba::read_split(Split split, const ImageList&, BadRows&) {
  const std::int64_t total =
      per_split(split, options_.train_triplets, options_.val_triplets, options_.test_triplets);
  SplitData data =
      labelled_.draw_split(usable(labelled_.members.at(split)), total,
                           mix_seed(static_cast<std::uint64_t>(options_.seed), split_index(split)));
  data.files.triplets = {root_ / kPartitionFile, root_ / kAttributeFile};
  return data;
}

std::optional<SplitAttributes> Celeba::load_attributes(Split split) {
  return labelled_.attributes(split, image_list());
}

}  // namespace wscsl::celeba

WSCSL_PLUGIN(celeba, "0.1.0", "Celeb-A and Celeb-A† with DiscoverNet's triplet protocol") {
  registrar.add<wscsl::Dataset, wscsl::celeba::Celeba>("celeba");
}
