#include "ut_zappos.hpp"

#include <fmt/format.h>

#include "wscsl/data/csn_layout.hpp"
#include "wscsl/data/triplets.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;

namespace wscsl::ut_zappos {
Schema<UtZapposOptions> UtZappos::schema() {
  using O = UtZapposOptions;
  Schema<O> s(
      "UT-Zappos-50k in CSN's layout: filenames.json (one image path per line; the line index is "
      "the image id), tripletlists/<condition>_tripletlist_<split>.txt (\"anchor far close\") or "
      "DiscoverNet's _half_reverse lists, and the image folder.");
  s.field("root", &O::root, "Directory holding filenames.json and tripletlists/.")
      .path()
      .required();
  s.field("images", &O::images,
          "Image folder: the paths of filenames.json are relative to it. A relative folder is "
          "taken relative to `root`.");
  s.field("conditions", &O::conditions,
          "Conditions, in label order; each names the files <condition>_tripletlist_<split>.txt.");
  s.field("half_reverse", &O::half_reverse,
          "Read DiscoverNet's <condition>_tripletlist_<split>_half_reverse.txt lists, whose 4th "
          "column marks the triplets presented reversed (0).");
  s.field("seed", &O::seed,
          "Seed of the shuffle that picks each split's subset (the reference loaders shuffle "
          "without a seed).")
      .min(0);
  s.field("train_triplets", &O::train_triplets,
          "Training triplets kept after pooling and shuffling every condition's list (DiscoverNet: "
          "200,000); 0 keeps all.")
      .min(0)
      .max(kMaxTriplets);
  s.field("val_triplets", &O::val_triplets, "Validation triplets kept (DiscoverNet: 20,000).")
      .min(0)
      .max(kMaxTriplets);
  s.field("test_triplets", &O::test_triplets, "Test triplets kept (DiscoverNet: 40,000).")
      .min(0)
      .max(kMaxTriplets);
  add_image_options(s);
  s.check([](const O& o, FieldChecker& c) {
    if (o.conditions.empty()) c.error("conditions", "needs at least one condition");
    check_condition_names(o.conditions, "conditions", c);
  });
  return s;
}

// CSN's triplet lists name each triplet's condition; the images carry no factor labels.
Contract UtZappos::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::TripletConditions}};
  return c;
}

UtZappos::UtZappos(const Options& options) : ImageDataset(options), options_(options) {
  // Checked here, so `wscsl check` reports missing files before anything runs.
  root_ = existing_directory(options.root, "UT-Zappos root");
  require_file(root_ / kCsnImageList, "UT-Zappos image list");
  existing_directory(root_ / options.images, "UT-Zappos image folder");
  for (const std::string& condition : options.conditions)
    for (Split split : image_splits())
      require_file(csn_triplet_file(root_, condition, split_name(split), options.half_reverse),
                   "UT-Zappos triplet list");
}

DatasetInfo UtZappos::info() const {
  std::vector<ConditionInfo> conditions;
  for (const std::string& c : options_.conditions)
    conditions.push_back({c, {}});
  return image_info(std::move(conditions), image_splits());
}

ImageList UtZappos::read_image_list(BadRows&) {
  ImageList list;
  list.folder = existing_directory(root_ / options_.images, "UT-Zappos image folder");
  list.index = root_ / kCsnImageList;
  const std::vector<std::string> lines = read_csn_image_list(list.index);
  list.entries.reserve(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i)
    list.entries.push_back({lines[i], static_cast<std::int64_t>(i + 1)});
  return list;
}

SplitData UtZappos::read_split(Split split, const ImageList& images, BadRows& bad) {
  const auto num_images = static_cast<std::int64_t>(images.entries.size());
  std::vector<CsnTriplet> pooled;
  std::vector<std::int64_t> pooled_conditions;
  std::vector<fs::path> files;
  for (std::size_t k = 0; k < options_.conditions.size(); ++k) {
    const fs::path file =
        csn_triplet_file(root_, options_.conditions[k], split_name(split), options_.half_reverse);
    files.push_back(file);
    for (const CsnTriplet& t :
         read_csn_triplets(file, num_images, images.index, options_.half_reverse, bad)) {
      pooled.push_back(t);
      pooled_conditions.push_back(static_cast<std::int64_t>(k));
    }
  }
  // The reference loaders: pool, shuffle, keep a prefix. One permutation moves both lists.
  std::vector<std::size_t> order(pooled.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  Rng rng(mix_seed(static_cast<std::uint64_t>(options_.seed), split_index(split)));
  rng.shuffle(order);
  const std::int64_t wanted =
      per_split(split, options_.train_triplets, options_.val_triplets, options_.test_triplets);
  if (wanted > 0 && static_cast<std::size_t>(wanted) < order.size())
    order.resize(static_cast<std::size_t>(wanted));
  const auto count = static_cast<std::int64_t>(order.size());
  SplitData data;
  data.num_images = num_images;
  data.files.triplets = std::move(files);
  data.triplets = at::empty({count, 3}, at::kLong);
  data.conditions = at::empty({count}, at::kLong);
  if (options_.half_reverse) data.reversed = at::empty({count}, at::kBool);
  std::int64_t* t = data.triplets.data_ptr<std::int64_t>();
  std::int64_t* c = data.conditions.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < count; ++i) {
    const std::size_t from = order[static_cast<std::size_t>(i)];
    t[3 * i] = pooled[from].anchor;
    t[3 * i + 1] = pooled[from].close;
    t[3 * i + 2] = pooled[from].far;
    c[i] = pooled_conditions[from];
    if (options_.half_reverse) data.reversed.data_ptr<bool>()[i] = pooled[from].reversed;
  }
  return data;
}

}  // namespace wscsl::ut_zappos

WSCSL_PLUGIN(ut_zappos, "0.1.0",
             "UT-Zappos-50k in CSN's layout (and DiscoverNet's reversed lists)") {
  registrar.add<wscsl::Dataset, wscsl::ut_zappos::UtZappos>("ut_zappos");
}
