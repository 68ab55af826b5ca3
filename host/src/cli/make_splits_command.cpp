#include "make_splits_command.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wscsl/data/attribute_split_files.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

// The layout's spelling of each split, in the order of the files.
constexpr std::pair<Split, const char*> kSplitFiles[] = {
    {Split::Train, "train"}, {Split::Val, "valid"}, {Split::Test, "test"}};

// The (attribute, value) pairs an image has, in attribute order.
std::vector<AttributeLine> known_pairs(const at::Tensor& values, std::int64_t id,
                                       std::int64_t image) {
  std::vector<AttributeLine> pairs;
  const auto row = values[id];
  for (std::int64_t a = 0; a < values.size(1); ++a) {
    const double v = row[a].item<double>();
    if (!std::isnan(v)) pairs.push_back({image, a, static_cast<std::int64_t>(v), 0});
  }
  return pairs;
}

// The [dataset] table that reads the written folder.
std::string dataset_table(const fs::path& out, const fs::path& images, const DatasetInfo& info) {
  std::vector<std::string> names, counts;
  for (const ConditionInfo& c : info.conditions) {
    names.push_back(fmt::format("\"{}\"", c.name));
    counts.push_back(std::to_string(c.values.size()));
  }
  return fmt::format(
      "[dataset]\ntype = \"attribute_splits\"\nroot = \"{}\"\nimages = \"{}\"\nbenchmark = "
      "\"custom\"\nattributes = [{}]\nvalues = [{}]\n",
      fs::absolute(out).lexically_normal().string(), images.string(), fmt::join(names, ", "),
      fmt::join(counts, ", "));
}

void make_splits(Dataset& dataset, const fs::path& out, double query_fraction, std::uint64_t seed) {
  const DatasetInfo info = dataset.info();
  for (const ConditionInfo& c : info.conditions)
    if (c.numeric)
      throw Error(fmt::format(
          "{}: condition '{}' is numeric, and attribute-specific retrieval compares categories; "
          "leave it out of the dataset's conditions",
          dataset.label(), c.name));
  for (const auto& [split, _] : kSplitFiles)
    if (!info.has_split(split))
      throw Error(fmt::format("{} has no {} split; the layout needs train, val and test",
                              dataset.label(), split_name(split)));
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw Error(fmt::format("--out {} is a file; give a folder", out.string()));
  fs::create_directories(out, ec);
  if (ec) throw Error(fmt::format("cannot create the folder {} ({})", out.string(), ec.message()));
  fs::path image_root;
  for (const auto& [split, file_name] : kSplitFiles) {
    const std::optional<SplitAttributes> a = dataset.attributes(split);
    if (!a)
      throw Error(
          fmt::format("{} has no per-image attributes to write splits from (use a "
                      "dataset with labels, e.g. image_folder)",
                      dataset.label()));
    if (a->files.empty())
      throw Error(
          fmt::format("{} names no image files, so its splits cannot be written as "
                      "image lists",
                      dataset.label()));
    image_root = a->image_root;
    const at::Tensor values = a->values.contiguous();
    std::vector<std::int64_t> members(a->members.data_ptr<std::int64_t>(),
                                      a->members.data_ptr<std::int64_t>() + a->members.numel());
    const auto count = static_cast<std::int64_t>(members.size());
    if (count < 2)
      throw Error(
          fmt::format("{}: the {} split has {} image{}; the layout needs at least two "
                      "in each split",
                      dataset.label(), split_name(split), count, count == 1 ? "" : "s"));
    std::vector<std::string> paths;
    for (std::int64_t id : members)
      paths.push_back(a->files[static_cast<std::size_t>(id)]);
    write_attribute_image_list(attribute_image_list(out, file_name), paths);
    if (split == Split::Train) {
      std::vector<AttributeLine> labels;
      for (std::int64_t i = 0; i < count; ++i)
        for (const AttributeLine& p : known_pairs(values, members[static_cast<std::size_t>(i)], i))
          labels.push_back(p);
      write_attribute_labels(attribute_label_file(out), labels);
      fmt::print("  {} ({} images, {} labels)\n", attribute_label_file(out).string(), count,
                 labels.size());
      continue;
    }
    // A seeded share of the split's images are queries (at least one), the others candidates
    // (at least one); each gives a line per attribute it has a value of.
    const std::vector<std::int64_t> order =
        seeded_permutation(mix_seed(seed, static_cast<std::uint64_t>(split)), count);
    const std::int64_t queries = std::clamp<std::int64_t>(
        std::llround(query_fraction * static_cast<double>(count)), 1, count - 1);
    std::vector<bool> is_query(static_cast<std::size_t>(count), false);
    for (std::int64_t i = 0; i < queries; ++i)
      is_query[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = true;
    std::vector<AttributeLine> query_lines, candidate_lines;
    for (std::int64_t i = 0; i < count; ++i)
      for (const AttributeLine& p : known_pairs(values, members[static_cast<std::size_t>(i)], i))
        (is_query[static_cast<std::size_t>(i)] ? query_lines : candidate_lines).push_back(p);
    const AttributeSplit layout_split =
        split == Split::Val ? AttributeSplit::Valid : AttributeSplit::Test;
    write_attribute_queries(attribute_query_file(out, layout_split), query_lines);
    write_attribute_queries(attribute_candidate_file(out, layout_split), candidate_lines);
    fmt::print("  {} split: {} query images ({} lines), {} candidate images ({} lines)\n",
               file_name, queries, query_lines.size(), count - queries, candidate_lines.size());
  }
  const std::string table = dataset_table(out, image_root, info);
  write_file_atomically(out / "dataset.toml", table);
  fmt::print("  {}: the [dataset] table that reads them:\n\n{}", (out / "dataset.toml").string(),
             table);
}

}  // namespace

MakeSplitsCommand::MakeSplitsCommand(CLI::App& app)
    : Command(app, "make-splits",
              "Write the split files of attribute-specific retrieval (filenames_*.txt, "
              "label_train.txt, query_*.txt, candidate_*.txt, as ASEN++ released them) from a "
              "dataset's attributes") {
  CLI::App& c = subcommand();
  c.add_option("pipeline", pipeline_, "Pipeline TOML file (its [dataset])")->required();
  c.add_option("--out", out_, "Output folder")->required();
  c.add_option("--set", overrides_, "Override a pipeline key");
  c.add_option("--query-fraction", query_fraction_,
               "Share of each validation and test image set that are queries (the others "
               "are candidates)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  c.add_option("--seed", seed_, "Seed of the query draw")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

int MakeSplitsCommand::run(const Invocation& invocation) {
  if (query_fraction_ <= 0.0 || query_fraction_ >= 1.0)
    throw Error(
        fmt::format("--query-fraction {} leaves no queries or no candidates; give a "
                    "share between 0 and 1",
                    query_fraction_));
  const OpenPipeline opened = open_pipeline(invocation.global, pipeline_, overrides_);
  Dataset& dataset = *opened.pipeline.dataset;
  fmt::print("wscsl: writing the attribute splits of {} into {}\n", dataset.label(), out_.string());
  make_splits(dataset, out_, query_fraction_, static_cast<std::uint64_t>(seed_));
  return 0;
}

}  // namespace wscsl::host
