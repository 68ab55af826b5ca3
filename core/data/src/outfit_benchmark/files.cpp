// The files of the embedded outfit benchmark: the Polyvore Outfits and Maryland layouts, rendered
// images and text features.
#include "files.hpp"

#include <algorithm>
#include <fstream>
#include <unordered_set>

#include <fmt/format.h>

#include "wscsl/data/idx_reader.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/item_text.hpp"
#include "wscsl/data/outfit_files.hpp"
#include "wscsl/data/text_features.hpp"
#include "wscsl/data/type_pairs_pickle.hpp"
#include "wscsl/error.hpp"

namespace wscsl::data {
namespace {

namespace fs = std::filesystem;

std::string identifier(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  const BenchmarkOutfit& o = plan.outfits[static_cast<std::size_t>(s.outfit)];
  return o.set_id + "_" + std::to_string(o.indices[static_cast<std::size_t>(s.position)]);
}

const BenchmarkItem& item_of(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  const BenchmarkOutfit& o = plan.outfits[static_cast<std::size_t>(s.outfit)];
  return plan.items[static_cast<std::size_t>(o.items[static_cast<std::size_t>(s.position)])];
}

std::vector<CompatibilityRecord> compatibility_records(
    const OutfitBenchmarkPlan& plan, const std::vector<CompatibilityLine>& lines) {
  std::vector<CompatibilityRecord> records;
  for (const CompatibilityLine& line : lines) {
    CompatibilityRecord record;
    record.compatible = line.compatible;
    for (const OutfitSlot& s : line.items)
      record.items.push_back(identifier(plan, s));
    records.push_back(std::move(record));
  }
  return records;
}

std::vector<BlankRecord> blank_records(const OutfitBenchmarkPlan& plan,
                                       const std::vector<BlankQuestion>& questions) {
  std::vector<BlankRecord> records;
  for (const BlankQuestion& q : questions) {
    BlankRecord record;
    for (const OutfitSlot& s : q.question)
      record.question.push_back(identifier(plan, s));
    for (const OutfitSlot& s : q.answers)
      record.answers.push_back(identifier(plan, s));
    record.blank_position = q.blank_position;
    records.push_back(std::move(record));
  }
  return records;
}

std::vector<OutfitRecord> polyvore_outfits(const OutfitBenchmarkPlan& plan,
                                           const SplitPlan& split) {
  std::vector<OutfitRecord> records;
  for (std::int64_t o : split.outfits) {
    const BenchmarkOutfit& outfit = plan.outfits[static_cast<std::size_t>(o)];
    OutfitRecord record{outfit.set_id, {}};
    for (std::size_t p = 0; p < outfit.items.size(); ++p) {
      OutfitEntry entry;
      entry.item_id = plan.items[static_cast<std::size_t>(outfit.items[p])].item_id;
      entry.index = outfit.indices[p];
      record.items.push_back(std::move(entry));
    }
    records.push_back(std::move(record));
  }
  return records;
}

std::map<std::string, ReleasedItemMetadata> item_metadata(const OutfitBenchmarkPlan& plan) {
  std::map<std::string, ReleasedItemMetadata> metadata;
  for (const BenchmarkItem& item : plan.items) {
    const FineCategory& c = fine_categories()[static_cast<std::size_t>(item.category)];
    const std::string colour = kColorNames[static_cast<std::size_t>(item.factors.color)];
    ReleasedItemMetadata& m = metadata[item.item_id];
    m.read = {item_type_name(item.type), item.title, item.url_name, std::to_string(c.id)};
    m.description = item.description;
    m.categories = {"Fashion", item_type_name(item.type), c.name};
    m.related = {colour + " " + c.name, std::string(c.name) + " outfits"};
  }
  return metadata;
}

std::vector<MarylandOutfit> maryland_outfits(const OutfitBenchmarkPlan& plan,
                                             const SplitPlan& split) {
  std::vector<MarylandOutfit> records;
  for (std::int64_t o : split.outfits) {
    const BenchmarkOutfit& outfit = plan.outfits[static_cast<std::size_t>(o)];
    const std::size_t n =
        std::min(outfit.items.size(), static_cast<std::size_t>(plan.maryland_max_items));
    const std::int64_t number = std::stoll(outfit.set_id);
    MarylandOutfit record;
    record.set_id = outfit.set_id;
    record.name = "outfit " + outfit.set_id;
    record.image = "synthetic://outfits/" + outfit.set_id + ".jpg";
    record.date = "one year";
    record.set_url = "synthetic://outfits/" + outfit.set_id;
    record.views = number % 1000;
    record.likes = number % 89;
    for (std::size_t p = 0; p < n; ++p) {
      const BenchmarkItem& item = plan.items[static_cast<std::size_t>(outfit.items[p])];
      const FineCategory& c = fine_categories()[static_cast<std::size_t>(item.category)];
      record.items.push_back({outfit.indices[p], item.title, 10.0 * (1 + item.source % 20),
                              item.source % 97, "synthetic://items/" + item.item_id + ".jpg",
                              c.id});
    }
    records.push_back(std::move(record));
  }
  return records;
}

// train_hglmm_pca6000.txt of a split: the distinct text keys of its items in the order the outfits
// list them, each followed by its feature; "0" for every zero, 4 significant digits otherwise.
void write_text_features(const fs::path& path, const OutfitBenchmarkPlan& plan,
                         const SplitPlan& split) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  std::unordered_set<std::string> written;
  std::string line;
  for (std::int64_t o : split.outfits)
    for (std::int64_t i : plan.outfits[static_cast<std::size_t>(o)].items) {
      const BenchmarkItem& item = plan.items[static_cast<std::size_t>(i)];
      const std::string key = polyvore_text_key(item.title, item.url_name);
      if (key.empty() || !written.insert(key).second) continue;
      line.clear();
      append_hglmm_line(line, key, text_feature(key));
      file.write(line.data(), static_cast<std::streamsize>(line.size()));
    }
  file.close();
  if (!file) throw Error(fmt::format("{}: cannot write the file", path.string()));
}

std::vector<TypePair> type_pairs() {
  std::vector<TypePair> pairs;
  for (int i = 0; i < kNumItemTypes; ++i)
    for (int j = i; j < kNumItemTypes; ++j)
      pairs.emplace_back(item_type_name(static_cast<ItemType>(i)),
                         item_type_name(static_cast<ItemType>(j)));
  return pairs;
}

void render_items(const OutfitBenchmarkPlan& plan, const FashionMnistFiles& source,
                  const fs::path& images) {
  constexpr int garment_bytes = kGarmentSize * kGarmentSize;
  constexpr int plane = kCanvasSize * kCanvasSize;
  std::uint8_t garment[garment_bytes];
  std::uint8_t rendered[3 * plane];
  Image8 image;
  image.width = image.height = kCanvasSize;
  image.channels = 3;
  image.pixels.resize(3 * plane);
  for (const BenchmarkItem& item : plan.items) {
    const FineCategory& c = fine_categories()[static_cast<std::size_t>(item.category)];
    reshape_garment(source.images.data.data() + item.source * garment_bytes, c.form, garment);
    render(garment, item.factors, rendered);
    for (int p = 0; p < plane; ++p)
      for (int ch = 0; ch < 3; ++ch)
        image.pixels[static_cast<std::size_t>(3 * p + ch)] = rendered[ch * plane + p];
    write_image_file(images / (item.item_id + ".jpg"), image);
  }
}

// A hard link where the file system allows one (half the bytes to write), else a copy.
void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (ec) {
    ec.clear();
    fs::copy_file(from, to, ec);
  }
  if (ec) throw Error(fmt::format("{}: cannot write the file ({})", to.string(), ec.message()));
}

}  // namespace

void write_benchmark(const fs::path& dir, const OutfitBenchmarkOptions& options) {
  const FashionMnistFiles source = read_fashion_mnist(options.fashion_mnist_root, "train");
  const OutfitBenchmarkPlan plan = plan_outfit_benchmark(options, source.labels.data);

  create_folder(dir / "images");
  render_items(plan, source, dir / "images");
  write_text_file(dir / "polyvore_item_metadata.json", item_metadata_json(item_metadata(plan)));
  std::string categories;
  for (const FineCategory& c : fine_categories())
    categories += fmt::format("{},{},{}\n", c.id, c.name, item_type_name(c.type));
  write_text_file(dir / "categories.csv", categories);

  const std::string typespaces = pickle_type_pairs(type_pairs());
  for (int v = 0; v < 2; ++v) {
    const fs::path variant_dir = dir / (v == 0 ? "nondisjoint" : "disjoint");
    const auto& variant = v == 0 ? plan.nondisjoint : plan.disjoint;
    create_folder(variant_dir);
    write_text_file(variant_dir / "typespaces.p", typespaces);
    for (std::size_t s = 0; s < 3; ++s) {
      const std::string name = kBenchmarkSplitNames[s];
      write_text_file(variant_dir / (name + ".json"),
                      polyvore_split_json(polyvore_outfits(plan, variant[s])));
      write_text_file(variant_dir / ("compatibility_" + name + ".txt"),
                      compatibility_text(compatibility_records(plan, variant[s].compatibility)));
      write_text_file(variant_dir / ("fill_in_blank_" + name + ".json"),
                      blank_file_json(blank_records(plan, variant[s].blanks)));
    }
    write_text_features(variant_dir / kTextFeatureFile, plan, variant[0]);
  }

  const fs::path maryland = dir / "maryland";
  create_folder(maryland / "images");
  for (std::size_t s = 0; s < 3; ++s) {
    write_text_file(maryland / (std::string(kBenchmarkSplitNames[s]) + "_no_dup.json"),
                    maryland_split_json(maryland_outfits(plan, plan.maryland[s])));
    for (std::int64_t o : plan.maryland[s].outfits) {
      const BenchmarkOutfit& outfit = plan.outfits[static_cast<std::size_t>(o)];
      const fs::path set_dir = maryland / "images" / outfit.set_id;
      create_folder(set_dir);
      const std::size_t n =
          std::min(outfit.items.size(), static_cast<std::size_t>(plan.maryland_max_items));
      for (std::size_t p = 0; p < n; ++p) {
        const fs::path from =
            dir / "images" / (item_of(plan, {o, static_cast<int>(p)}).item_id + ".jpg");
        link_or_copy(from, set_dir / (std::to_string(outfit.indices[p]) + ".jpg"));
      }
    }
  }
  // Han's train split is nondisjoint's, so its text keys (the titles) are among nondisjoint's.
  link_or_copy(dir / "nondisjoint" / kTextFeatureFile, maryland / kTextFeatureFile);
  write_text_file(maryland / "fill_in_the_blank_test.json",
                  blank_file_json(blank_records(plan, plan.maryland[2].blanks)));
  write_text_file(maryland / "fashion-compatibility-prediction.txt",
                  compatibility_text(compatibility_records(plan, plan.maryland[2].compatibility)));
  std::string types = "categoryid,type\n";
  for (const FineCategory& c : fine_categories())
    types += fmt::format("{},{}\n", c.id, item_type_name(c.type));
  write_text_file(maryland / "category_types.csv", types);
}

}  // namespace wscsl::data
