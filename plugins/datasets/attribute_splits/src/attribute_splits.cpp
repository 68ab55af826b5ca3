#include "attribute_splits.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/types.h>

#include "wscsl/data/attribute_split_files.hpp"
#include "wscsl/data/region_benchmark.hpp"
#include "wscsl/data/triplets.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;

namespace wscsl::attribute_splits {
namespace {

// The split files spell the validation split "valid".
std::string_view file_split_name(Split split) {
  return split == Split::Val ? "valid" : split_name(split);
}

AttributeSplit attribute_split(Split split) {
  return split == Split::Val ? AttributeSplit::Valid : AttributeSplit::Test;
}

constexpr std::uint64_t kRowAttributeStream = 0x617474726962;  // "attrib"

at::Tensor line_tensor(const std::vector<AttributeLine>& lines, std::int64_t first_id) {
  at::Tensor t = torch::empty({static_cast<std::int64_t>(lines.size()), 3}, torch::kLong);
  std::int64_t* p = t.data_ptr<std::int64_t>();
  for (const AttributeLine& l : lines) {
    *p++ = first_id + l.image;
    *p++ = l.attribute;
    *p++ = l.value;
  }
  return t;
}

}  // namespace

AttributeTable benchmark_table(Benchmark benchmark) {
  switch (benchmark) {
    case Benchmark::FashionAI:
      return {{"skirt_length", "sleeve_length", "coat_length", "pant_length", "collar_design",
               "lapel_design", "neckline_design", "neck_design"},
              {6, 9, 8, 6, 5, 5, 10, 5}};
    case Benchmark::DARN:
      // The released names with '_' for their spaces (condition names are parts of file names).
      return {{"clothes_category", "clothes_button", "clothes_color", "clothes_length",
               "clothes_pattern", "clothes_shape", "collar_shape", "sleeve_length", "sleeve_shape"},
              {20, 13, 55, 7, 28, 11, 26, 8, 17}};
    case Benchmark::DeepFashion:
      return {
          {"texture-related", "fabric-related", "shape-related", "part-related", "style-related"},
          {156, 218, 180, 216, 230}};
    case Benchmark::Regions: {
      AttributeTable table;
      for (const data::RegionAttribute& a : data::region_attributes()) {
        table.names.push_back(a.name);
        table.values.push_back(static_cast<std::int64_t>(a.values.size()));
        table.value_names.push_back(a.values);
      }
      return table;
    }
    case Benchmark::Custom:
      break;
  }
  return {};
}

Schema<AttributeSplitsOptions> AttributeSplits::schema() {
  using O = AttributeSplitsOptions;
  Schema<O> s(
      "Attribute-specific retrieval splits in the layout ASEN++ released for FashionAI, DARN and "
      "DeepFashion (filenames_*.txt, label_train.txt, query_*.txt, candidate_*.txt): triplets "
      "drawn every epoch as the released sampler draws them; query and candidate lines to rank.");
  s.field("root", &O::root, "Folder of the split files.").path().required();
  s.field("images", &O::images,
          "Folder the image paths of filenames_*.txt are relative to; empty: `root`, as "
          "released (`wscsl make-splits` names the image folder it read).")
      .path();
  s.field("benchmark", &O::benchmark,
          "The attribute table: one of the released benchmarks, or \"custom\" with `attributes` "
          "and `values`.",
          EnumChoices<Benchmark>{
              {Benchmark::FashionAI, "fashionai", "FashionAI's 8 attributes (5 to 10 values)"},
              {Benchmark::DARN, "darn", "DARN's 9 attributes (7 to 55 values)"},
              {Benchmark::DeepFashion, "deepfashion",
               "DeepFashion's 5 attribute groups (156 to 230 values)"},
              {Benchmark::Regions, "regions",
               "the generated region benchmark, written into `root` unless it is there"},
              {Benchmark::Custom, "custom", "the table of `attributes` and `values`"}});
  const auto custom = [](const O& o) { return o.benchmark == Benchmark::Custom; };
  s.field("attributes", &O::attributes, "The attribute names, in the files' attribute order.")
      .only_when("benchmark = \"custom\"", custom);
  s.field("values", &O::values, "The value count of each attribute of `attributes`.")
      .only_when("benchmark = \"custom\"", custom);
  s.field("epoch_triplets", &O::epoch_triplets,
          "Training triplets drawn afresh every epoch (100,000 in the released configurations).")
      .min(1)
      .max(kMaxTriplets);
  s.field("seed", &O::seed,
          "Seed of each training triplet's attribute (drawn once; the images of every epoch are "
          "drawn from the run's seed).")
      .min(0);
  const auto regions = [](const O& o) { return o.benchmark == Benchmark::Regions; };
  s.field("generated_images", &O::generated_images,
          "The images of the generated train, valid and test splits.")
      .only_when("benchmark = \"regions\"", regions);
  s.field("generator_seed", &O::generator_seed, "The seed of the generated images and lines.")
      .min(0)
      .only_when("benchmark = \"regions\"", regions);
  add_image_options(s);
  s.check([](const O& o, FieldChecker& c) {
    if (o.generated_images.size() != 3)
      c.error("generated_images", fmt::format("must give 3 counts (train, valid, test), got {}",
                                              o.generated_images.size()));
    for (std::int64_t n : o.generated_images)
      if (n < 2) c.error("generated_images", fmt::format("every split needs 2 images, got {}", n));
    if (o.benchmark != Benchmark::Custom) return;
    if (o.attributes.empty())
      c.error("attributes", "benchmark = \"custom\" needs the attribute names");
    if (o.values.size() != o.attributes.size())
      c.error("values", fmt::format("must give one value count per attribute ({}), got {}",
                                    o.attributes.size(), o.values.size()));
    for (std::int64_t v : o.values)
      if (v < 2)
        c.error(
            "values",
            fmt::format("every attribute needs at least two values to draw triplets, got {}", v));
    check_condition_names(o.attributes, "attributes", c);
  });
  return s;
}

Contract AttributeSplits::contract_of(const Options&) {
  Contract c;
  c.provides = {
      {Resource::TripletConditions}, {Resource::ImageFactors}, {Resource::AttributeQueries}};
  return c;
}

AttributeSplits::AttributeSplits(const Options& options)
    : ImageDataset(options),
      options_(options),
      table_(options.benchmark == Benchmark::Custom
                 ? AttributeTable{options.attributes, options.values, {}}
                 : benchmark_table(options.benchmark)) {
  if (options_.benchmark == Benchmark::Regions) {
    data::RegionBenchmarkOptions generated;
    generated.train_images = options_.generated_images[0];
    generated.valid_images = options_.generated_images[1];
    generated.test_images = options_.generated_images[2];
    generated.seed = static_cast<std::uint64_t>(options_.generator_seed);
    data::ensure_region_benchmark(options_.root, generated);
  }
  // Read now: `wscsl check` sees a missing or bad image list before anything loads.
  image_list();
  require_file(attribute_label_file(options_.root), "training label file");
  for (Split split : {Split::Val, Split::Test}) {
    require_file(attribute_query_file(options_.root, attribute_split(split)), "query file");
    require_file(attribute_candidate_file(options_.root, attribute_split(split)), "candidate file");
  }
}

DatasetInfo AttributeSplits::info() const {
  std::vector<ConditionInfo> conditions;
  for (std::size_t a = 0; a < table_.names.size(); ++a) {
    ConditionInfo c;
    c.name = table_.names[a];
    if (!table_.value_names.empty())
      c.values = table_.value_names[a];
    else  // the releases number the values without naming them
      for (std::int64_t v = 0; v < table_.values[a]; ++v)
        c.values.push_back(std::to_string(v));
    conditions.push_back(std::move(c));
  }
  DatasetInfo d = image_info(std::move(conditions), image_splits());
  d.triplet_counts[Split::Train] = options_.epoch_triplets;
  return d;
}

ImageList AttributeSplits::read_image_list(BadRows&) {
  ImageList list;
  const fs::path root = existing_directory(options_.root, "split folder");
  list.folder =
      options_.images.empty() ? root : existing_directory(options_.images, "image folder");
  list.index = attribute_image_list(root, "train");
  for (Split split : image_splits()) {
    const fs::path file = attribute_image_list(root, file_split_name(split));
    require_file(file, "image list");
    const std::vector<std::string> lines = read_lines(file);
    first_id_.push_back(static_cast<std::int64_t>(list.entries.size()));
    counts_.push_back(static_cast<std::int64_t>(lines.size()));
    for (std::size_t i = 0; i < lines.size(); ++i)
      list.entries.push_back({lines[i], static_cast<std::int64_t>(i + 1), file});
  }
  return list;
}

SplitData AttributeSplits::read_split(Split split, const ImageList&, BadRows& bad) {
  return split == Split::Train ? read_training(bad) : read_queries(split, bad);
}

SplitData AttributeSplits::read_training(BadRows& bad) {
  const fs::path file = attribute_label_file(options_.root);
  const std::int64_t first = first_id_[split_index(Split::Train)];
  const std::vector<AttributeLine> pairs =
      read_attribute_lines(file, true, counts_[split_index(Split::Train)],
                           attribute_image_list(options_.root, "train"), table_.values, bad);
  std::vector<std::int64_t> ids;
  for (const AttributeLine& p : pairs)
    ids.push_back(first + p.image);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const std::vector<std::int64_t> kept = usable(ids);
  const std::set<std::int64_t> good(kept.begin(), kept.end());

  SplitData data;
  data.num_images = static_cast<std::int64_t>(image_list().entries.size());
  data.factors = torch::full({data.num_images, static_cast<std::int64_t>(table_.names.size())}, -1,
                             torch::kLong);
  auto factors = data.factors.accessor<std::int64_t, 2>();
  pools_.images.assign(table_.names.size(), {});
  for (std::size_t a = 0; a < table_.names.size(); ++a)
    pools_.images[a].assign(static_cast<std::size_t>(table_.values[a]), {});
  for (const AttributeLine& p : pairs) {
    const std::int64_t id = first + p.image;
    if (!good.count(id)) continue;
    factors[id][p.attribute] = p.value;
    auto& pool =
        pools_.images[static_cast<std::size_t>(p.attribute)][static_cast<std::size_t>(p.value)];
    if (std::find(pool.begin(), pool.end(), id) == pool.end()) pool.push_back(id);
  }
  pools_.anchor_values.assign(table_.names.size(), {});
  for (std::size_t a = 0; a < table_.names.size(); ++a) {
    std::int64_t with_images = 0;
    for (std::size_t v = 0; v < pools_.images[a].size(); ++v) {
      if (pools_.images[a][v].size() >= 2)
        pools_.anchor_values[a].push_back(static_cast<std::int64_t>(v));
      with_images += pools_.images[a][v].empty() ? 0 : 1;
    }
    if (pools_.anchor_values[a].empty() || with_images < 2)
      throw DataError(fmt::format(
          "{}: attribute {} ('{}') cannot give a triplet: it needs a value that two usable "
          "training images hold and another value that one holds ({} of its values are held by "
          "any)",
          file.string(), a, table_.names[a], with_images));
  }
  Rng rng(mix_seed(static_cast<std::uint64_t>(options_.seed), kRowAttributeStream));
  row_attributes_.resize(static_cast<std::size_t>(options_.epoch_triplets));
  for (std::int64_t& a : row_attributes_)
    a = static_cast<std::int64_t>(rng.below(table_.names.size()));
  data.conditions = torch::tensor(row_attributes_, torch::kLong);
  data.triplets = draw(static_cast<std::uint64_t>(options_.seed));
  data.files.triplets = {file};
  return data;
}

at::Tensor AttributeSplits::draw(std::uint64_t seed) const {
  Rng rng(seed);
  const auto rows = static_cast<std::int64_t>(row_attributes_.size());
  at::Tensor triplets = torch::empty({rows, 3}, torch::kLong);
  std::int64_t* t = triplets.data_ptr<std::int64_t>();
  for (std::int64_t a : row_attributes_) {
    const auto attribute = static_cast<std::size_t>(a);
    const auto& pools = pools_.images[attribute];
    const auto& anchors = pools_.anchor_values[attribute];
    // Two distinct values: the first among those an anchor and a close image hold, the second
    // among the other values any image holds.
    const std::int64_t close_value = anchors[rng.below(anchors.size())];
    std::int64_t far_value = close_value;
    while (far_value == close_value || pools[static_cast<std::size_t>(far_value)].empty())
      far_value = static_cast<std::int64_t>(rng.below(pools.size()));
    const auto& close_pool = pools[static_cast<std::size_t>(close_value)];
    const auto& far_pool = pools[static_cast<std::size_t>(far_value)];
    const std::uint64_t anchor = rng.below(close_pool.size());
    std::uint64_t close = rng.below(close_pool.size() - 1);
    if (close >= anchor) ++close;
    *t++ = close_pool[anchor];
    *t++ = close_pool[close];
    *t++ = far_pool[rng.below(far_pool.size())];
  }
  return triplets;
}

at::Tensor AttributeSplits::draw_epoch_triplets(Split split, std::int64_t epoch,
                                                std::uint64_t seed) {
  if (split != Split::Train) return this->split(split).triplets;
  this->split(split);  // fills the pools
  return draw(mix_seed(seed, static_cast<std::uint64_t>(epoch)));
}

SplitData AttributeSplits::read_queries(Split split, BadRows& bad) {
  const std::size_t s = split_index(split);
  const fs::path list = attribute_image_list(options_.root, file_split_name(split));
  const fs::path query_file = attribute_query_file(options_.root, attribute_split(split));
  const fs::path candidate_file = attribute_candidate_file(options_.root, attribute_split(split));
  std::vector<AttributeLine> queries =
      read_attribute_lines(query_file, false, counts_[s], list, table_.values, bad);
  std::vector<AttributeLine> candidates =
      read_attribute_lines(candidate_file, false, counts_[s], list, table_.values, bad);
  std::vector<std::int64_t> ids;
  for (const auto* lines : {&queries, &candidates})
    for (const AttributeLine& l : *lines)
      ids.push_back(first_id_[s] + l.image);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const std::vector<std::int64_t> kept = usable(ids);
  const std::set<std::int64_t> good(kept.begin(), kept.end());
  const auto unusable = [&](const AttributeLine& l) { return !good.count(first_id_[s] + l.image); };
  queries.erase(std::remove_if(queries.begin(), queries.end(), unusable), queries.end());
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(), unusable),
                   candidates.end());

  SplitData data;
  data.num_images = static_cast<std::int64_t>(image_list().entries.size());
  data.triplets = torch::empty({0, 3}, torch::kLong);
  data.factors = torch::full({data.num_images, static_cast<std::int64_t>(table_.names.size())}, -1,
                             torch::kLong);
  auto factors = data.factors.accessor<std::int64_t, 2>();
  for (const auto* lines : {&queries, &candidates})
    for (const AttributeLine& l : *lines)
      factors[first_id_[s] + l.image][l.attribute] = l.value;
  data.attribute_queries =
      AttributeQueries{line_tensor(queries, first_id_[s]), line_tensor(candidates, first_id_[s])};
  data.files.queries = query_file;
  data.files.candidates = candidate_file;
  return data;
}

}  // namespace wscsl::attribute_splits

WSCSL_PLUGIN(attribute_splits, "0.1.0",
             "Attribute-specific retrieval splits (FashionAI, DARN, DeepFashion as ASEN++ released "
             "them)") {
  registrar.add<wscsl::Dataset, wscsl::attribute_splits::AttributeSplits>("attribute_splits");
}
