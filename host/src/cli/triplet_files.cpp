#include "triplet_files.hpp"

#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <fmt/format.h>

#include "wscsl/data/csn_layout.hpp"
#include "wscsl/data/csv.hpp"
#include "wscsl/data/image_dataset.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/triplets.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

void check_names(const DatasetInfo& info, const std::string& label) {
  for (const ConditionInfo& c : info.conditions)
    if (!valid_csn_name(c.name))
      throw Error(fmt::format("{}: condition '{}' cannot be part of a file name", label, c.name));
}

void report(std::FILE* log, const fs::path& file, std::size_t lines) {
  if (log) fmt::print(log, "  {} ({} lines)\n", file.string(), lines);
}

}  // namespace

void make_triplets(Dataset& dataset, const MakeTripletsOptions& options, std::FILE* log) {
  const DatasetInfo info = dataset.info();
  check_names(info, dataset.label());
  if (options.far_beyond < options.close_within)
    throw Error(fmt::format("far_beyond ({}) must be at least close_within ({})",
                            options.far_beyond, options.close_within));
  fs::create_directories(options.out / kCsnTripletDir);
  std::vector<std::string> files;
  fs::path image_root;
  for (std::size_t s = 0; s < info.splits.size(); ++s) {
    const Split split = info.splits[s];
    const std::string_view name = split_name(split);
    const std::int64_t count = per_split(split, options.train, options.val, options.test);
    const std::optional<SplitAttributes> a = dataset.attributes(split);
    if (!a)
      throw Error(fmt::format(
          "{} has no per-image attributes to draw triplets from (use a dataset with labels, e.g. "
          "image_folder or celeba)",
          dataset.label()));
    if (a->files.empty())
      throw Error(
          fmt::format("{} names no image files, so its triplets cannot be written in "
                      "CSN's layout (try `wscsl export`)",
                      dataset.label()));
    if (files.empty()) files = a->files, image_root = a->image_root;
    if (a->files != files)
      throw Error(fmt::format("{}: split '{}' lists other image files than split '{}'",
                              dataset.label(), name, split_name(info.splits.front())));
    const at::Tensor values = a->values.contiguous();
    const std::vector<std::int64_t> members(
        a->members.data_ptr<std::int64_t>(),
        a->members.data_ptr<std::int64_t>() + a->members.numel());
    const std::int64_t f = info.num_conditions();
    for (std::int64_t k = 0; k < f; ++k) {
      const ConditionInfo& c = info.conditions[static_cast<std::size_t>(k)];
      std::vector<double> column(static_cast<std::size_t>(values.size(0)));
      for (std::size_t i = 0; i < column.size(); ++i)
        column[i] = values.data_ptr<double>()[static_cast<std::int64_t>(i) * f + k];
      TripletRule rule;
      rule.numeric = c.numeric;
      rule.close_within = options.close_within;
      rule.far_beyond = options.far_beyond;
      Rng rng(mix_seed(mix_seed(static_cast<std::uint64_t>(options.seed), s),
                       static_cast<std::uint64_t>(k)));
      std::vector<Triplet> triplets;
      draw_condition_triplets(column, members, rule, k, c.name, count, rng, triplets);
      const fs::path file = csn_triplet_file(options.out, c.name, name, false);
      write_csn_triplets(file, triplets);
      report(log, file, triplets.size());
      if (options.half_reverse) {
        std::vector<bool> reversed(triplets.size());
        for (std::size_t i = 0; i < reversed.size(); ++i)
          reversed[i] = rng.below(2) == 1;
        const fs::path half = csn_triplet_file(options.out, c.name, name, true);
        write_csn_half_reverse(half, triplets, reversed);
        report(log, half, triplets.size());
      }
    }
  }
  write_csn_image_list(options.out / kCsnImageList, files);
  report(log, options.out / kCsnImageList, files.size());
  if (log) fmt::print(log, "  (image paths relative to {})\n", image_root.string());
}

void export_dataset(Dataset& dataset, const fs::path& out, std::FILE* log) {
  const DatasetInfo info = dataset.info();
  check_names(info, dataset.label());
  if (info.channels != 3 && info.channels != 1)
    throw Error(fmt::format("{} has {}-channel images; export writes gray or RGB PNG files",
                            dataset.label(), info.channels));
  fs::create_directories(out / kCsnTripletDir);
  std::vector<std::string> files;
  std::string csv = "file,split";
  for (const ConditionInfo& c : info.conditions)
    csv += "," + csv_field(c.name);
  csv += "\n";
  bool labelled = true;
  constexpr std::int64_t kBatch = 256;
  for (Split split : info.splits) {
    const std::string name(split_name(split));
    const SplitData& data = dataset.split(split);
    const auto offset = static_cast<std::int64_t>(files.size());
    labelled = labelled && data.factors.defined();
    const at::Tensor factors = labelled ? data.factors.contiguous() : at::Tensor();
    for (std::int64_t begin = 0; begin < data.num_images; begin += kBatch) {
      const at::Tensor ids =
          at::arange(begin, std::min(begin + kBatch, data.num_images), at::kLong);
      const at::Tensor images = dataset.images(split, ids, {});
      if (images.min().item<double>() < 0 || images.max().item<double>() > 1)
        throw Error(
            fmt::format("{}: split '{}' has pixel values outside [0, 1]; export writes "
                        "the images as they are served, so turn normalisation off",
                        dataset.label(), name));
      const at::Tensor bytes =
          images.mul(255).round_().clamp_(0, 255).to(at::kByte).permute({0, 2, 3, 1}).contiguous();
      for (std::int64_t i = 0; i < ids.size(0); ++i) {
        Image8 image;
        image.height = static_cast<int>(info.height);
        image.width = static_cast<int>(info.width);
        image.channels = static_cast<int>(info.channels);
        const std::uint8_t* p = bytes[i].data_ptr<std::uint8_t>();
        image.pixels.assign(p, p + bytes[i].numel());
        const std::string file = fmt::format("{}/{}.png", name, begin + i);
        fs::create_directories(out / "images" / name);
        write_image_file(out / "images" / file, image);
        files.push_back(file);
        if (labelled) {
          csv += csv_field(file) + "," + csv_field(name);
          for (std::int64_t k = 0; k < info.num_conditions(); ++k) {
            const std::int64_t v =
                factors.data_ptr<std::int64_t>()[(begin + i) * info.num_conditions() + k];
            const auto& names = info.conditions[static_cast<std::size_t>(k)].values;
            csv += ",";
            if (v >= 0)
              csv += csv_field(static_cast<std::size_t>(v) < names.size()
                                   ? names[static_cast<std::size_t>(v)]
                                   : std::to_string(v));
          }
          csv += "\n";
        }
      }
    }
    std::vector<std::vector<Triplet>> by_condition(info.conditions.size());
    const at::Tensor t = data.triplets.contiguous();
    const at::Tensor conditions = data.conditions.defined() ? data.conditions.contiguous()
                                                            : at::full({t.size(0)}, -1, at::kLong);
    for (std::int64_t i = 0; i < t.size(0); ++i) {
      const std::int64_t c = conditions.data_ptr<std::int64_t>()[i];
      if (c < 0)
        throw Error(
            fmt::format("{}: split '{}' has a triplet of unknown condition; the CSN layout "
                        "keeps one list per condition",
                        dataset.label(), name));
      const std::int64_t* row = t.data_ptr<std::int64_t>() + 3 * i;
      by_condition[static_cast<std::size_t>(c)].push_back(
          {offset + row[0], offset + row[1], offset + row[2], c});
    }
    for (std::size_t k = 0; k < by_condition.size(); ++k) {
      const fs::path file = csn_triplet_file(out, info.conditions[k].name, name, false);
      write_csn_triplets(file, by_condition[k]);
      report(log, file, by_condition[k].size());
    }
  }
  write_csn_image_list(out / kCsnImageList, files);
  report(log, out / kCsnImageList, files.size());
  if (labelled) {
    write_file_atomically(out / "attributes.csv", csv);
    report(log, out / "attributes.csv", files.size() + 1);
  }
}

}  // namespace wscsl::host
