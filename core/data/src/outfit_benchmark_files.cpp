// Writing the embedded outfit benchmark: the files of the Polyvore Outfits and Maryland layouts,
// rendered images, and the lock, staging folder and stamp that make it safe to share.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wscsl/data/idx_reader.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/item_text.hpp"
#include "wscsl/data/outfit_benchmark.hpp"
#include "wscsl/error.hpp"

namespace wscsl::data {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kStampName = "wscsl_outfit_benchmark.stamp";
// Present only while a staging folder is being written, so a leftover one is known to be ours.
constexpr const char* kPartialMarker = "wscsl_outfit_benchmark.partial";
constexpr int kFormatVersion = 2;  // 2: text keys, train_hglmm_pca6000.txt

std::string stamp_text(const OutfitBenchmarkOptions& options) {
  return fmt::format("wscsl outfit benchmark {}\npreset {}\nseed {}\nfashion_mnist_root {}\n",
                     kFormatVersion, options.preset == OutfitPreset::Tiny ? "tiny" : "medium",
                     options.seed, options.fashion_mnist_root.string());
}

[[noreturn]] void fail_system(const fs::path& path, const std::string& what, int error) {
  throw Error(fmt::format("{}: cannot {} ({})", path.string(), what, std::strerror(error)));
}

void write_text_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write the file", path.string()));
}

std::string read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

bool is_ours(const fs::path& dir) {
  std::error_code ec;
  return fs::is_empty(dir, ec) || fs::exists(dir / kStampName, ec) ||
         fs::exists(dir / kPartialMarker, ec);
}

void remove_ours(const fs::path& dir) {
  if (!is_ours(dir))
    throw Error(fmt::format(
        "{}: a folder of that name is in the way and holds no outfit benchmark stamp; remove it "
        "or choose another root",
        dir.string()));
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec)
    throw Error(
        fmt::format("{}: cannot remove the leftover folder ({})", dir.string(), ec.message()));
}

void sync_folder(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_system(path, "open the folder to sync it", errno);
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) fail_system(path, "sync", error);
}

class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail_system(path, "open the lock file", errno);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd_);
      fail_system(path, "lock", error);
    }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// Python pickle, protocol 2, of a list of (str, str) tuples: PROTO 2, EMPTY_LIST, then per tuple
// BINUNICODE ×2, TUPLE2, APPEND, and STOP.
std::string pickle_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out = "\x80\x02]";
  auto unicode = [&](const std::string& s) {
    out += 'X';
    const auto n = static_cast<std::uint32_t>(s.size());
    for (int b = 0; b < 4; ++b)
      out += static_cast<char>((n >> (8 * b)) & 0xFF);
    out += s;
  };
  for (const auto& [a, b] : pairs) {
    unicode(a);
    unicode(b);
    out += '\x86';
    out += 'a';
  }
  out += '.';
  return out;
}

std::string identifier(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  const BenchmarkOutfit& o = plan.outfits[static_cast<std::size_t>(s.outfit)];
  return o.set_id + "_" + std::to_string(o.indices[static_cast<std::size_t>(s.position)]);
}

const BenchmarkItem& item_of(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  const BenchmarkOutfit& o = plan.outfits[static_cast<std::size_t>(s.outfit)];
  return plan.items[static_cast<std::size_t>(o.items[static_cast<std::size_t>(s.position)])];
}

std::string compatibility_text(const OutfitBenchmarkPlan& plan,
                               const std::vector<CompatibilityLine>& lines) {
  std::string out;
  for (const CompatibilityLine& line : lines) {
    out += line.compatible ? "1" : "0";
    for (const OutfitSlot& s : line.items)
      out += " " + identifier(plan, s);
    out += "\n";
  }
  return out;
}

std::string questions_json(const OutfitBenchmarkPlan& plan, const std::vector<BlankQuestion>& qs) {
  json out = json::array();
  for (const BlankQuestion& q : qs) {
    json question = json::array(), answers = json::array();
    for (const OutfitSlot& s : q.question)
      question.push_back(identifier(plan, s));
    for (const OutfitSlot& s : q.answers)
      answers.push_back(identifier(plan, s));
    out.push_back(
        {{"question", question}, {"answers", answers}, {"blank_position", q.blank_position}});
  }
  return out.dump() + "\n";
}

std::string polyvore_split_json(const OutfitBenchmarkPlan& plan, const SplitPlan& split) {
  json out = json::array();
  for (std::int64_t o : split.outfits) {
    const BenchmarkOutfit& outfit = plan.outfits[static_cast<std::size_t>(o)];
    json items = json::array();
    for (std::size_t p = 0; p < outfit.items.size(); ++p)
      items.push_back({{"item_id", plan.items[static_cast<std::size_t>(outfit.items[p])].item_id},
                       {"index", outfit.indices[p]}});
    out.push_back({{"set_id", outfit.set_id}, {"items", items}});
  }
  return out.dump() + "\n";
}

std::string metadata_json(const OutfitBenchmarkPlan& plan) {
  json out = json::object();
  for (const BenchmarkItem& item : plan.items) {
    const FineCategory& c = fine_categories()[static_cast<std::size_t>(item.category)];
    const std::string colour = kColorNames[static_cast<std::size_t>(item.factors.color)];
    out[item.item_id] = {
        {"semantic_category", item_type_name(item.type)},
        {"title", item.title},
        {"url_name", item.url_name},
        {"category_id", std::to_string(c.id)},
        {"description", item.description},
        {"catgeories", json::array({"Fashion", item_type_name(item.type), c.name})},
        {"related", json::array({colour + " " + c.name, std::string(c.name) + " outfits"})}};
  }
  return out.dump() + "\n";
}

std::string maryland_split_json(const OutfitBenchmarkPlan& plan, const SplitPlan& split) {
  json out = json::array();
  for (std::int64_t o : split.outfits) {
    const BenchmarkOutfit& outfit = plan.outfits[static_cast<std::size_t>(o)];
    const std::size_t n =
        std::min(outfit.items.size(), static_cast<std::size_t>(plan.maryland_max_items));
    json items = json::array();
    for (std::size_t p = 0; p < n; ++p) {
      const BenchmarkItem& item = plan.items[static_cast<std::size_t>(outfit.items[p])];
      const FineCategory& c = fine_categories()[static_cast<std::size_t>(item.category)];
      items.push_back({{"index", outfit.indices[p]},
                       {"name", item.title},
                       {"price", 10.0 * (1 + item.source % 20)},
                       {"likes", item.source % 97},
                       {"image", "synthetic://items/" + item.item_id + ".jpg"},
                       {"categoryid", c.id}});
    }
    const std::int64_t number = std::stoll(outfit.set_id);
    out.push_back({{"name", "outfit " + outfit.set_id},
                   {"views", number % 1000},
                   {"items", items},
                   {"image", "synthetic://outfits/" + outfit.set_id + ".jpg"},
                   {"likes", number % 89},
                   {"date", "one year"},
                   {"set_url", "synthetic://outfits/" + outfit.set_id},
                   {"set_id", outfit.set_id},
                   {"desc", ""}});
  }
  return out.dump() + "\n";
}

// train_hglmm_pca6000.txt of a split: the distinct text keys of its items in the order the outfits
// list them, each followed by its feature; "0" for every zero, 4 significant digits otherwise.
void write_text_features(const fs::path& path, const OutfitBenchmarkPlan& plan,
                         const SplitPlan& split) {
  std::string zero_run;  // nearly all values are zero: they are written in runs
  for (int k = 0; k < kTextFeatureSize; ++k)
    zero_run += ",0";
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  std::unordered_set<std::string> written;
  fmt::memory_buffer line;
  for (std::int64_t o : split.outfits)
    for (std::int64_t i : plan.outfits[static_cast<std::size_t>(o)].items) {
      const BenchmarkItem& item = plan.items[static_cast<std::size_t>(i)];
      const std::string key = polyvore_text_key(item.title, item.url_name);
      if (key.empty() || !written.insert(key).second) continue;
      line.clear();
      line.append(key);
      const std::vector<double> feature = text_feature(key);
      std::size_t zeros = 0;
      for (std::size_t k = 0; k <= feature.size(); ++k) {
        if (k < feature.size() && feature[k] == 0) {
          ++zeros;
          continue;
        }
        line.append(zero_run.data(), zero_run.data() + 2 * zeros);
        zeros = 0;
        if (k < feature.size()) fmt::format_to(std::back_inserter(line), ",{:.4g}", feature[k]);
      }
      line.push_back('\n');
      file.write(line.data(), static_cast<std::streamsize>(line.size()));
    }
  file.close();
  if (!file) throw Error(fmt::format("{}: cannot write the file", path.string()));
}

std::vector<std::pair<std::string, std::string>> type_pairs() {
  std::vector<std::pair<std::string, std::string>> pairs;
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

void create_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create the folder ({})", dir.string(), ec.message()));
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

void write_benchmark(const fs::path& dir, const OutfitBenchmarkOptions& options) {
  const FashionMnistFiles source = read_fashion_mnist(options.fashion_mnist_root, "train");
  const OutfitBenchmarkPlan plan = plan_outfit_benchmark(options, source.labels.data);

  create_folder(dir / "images");
  render_items(plan, source, dir / "images");
  write_text_file(dir / "polyvore_item_metadata.json", metadata_json(plan));
  std::string categories;
  for (const FineCategory& c : fine_categories())
    categories += fmt::format("{},{},{}\n", c.id, c.name, item_type_name(c.type));
  write_text_file(dir / "categories.csv", categories);

  const std::string typespaces = pickle_pairs(type_pairs());
  for (int v = 0; v < 2; ++v) {
    const fs::path variant_dir = dir / (v == 0 ? "nondisjoint" : "disjoint");
    const auto& variant = v == 0 ? plan.nondisjoint : plan.disjoint;
    create_folder(variant_dir);
    write_text_file(variant_dir / "typespaces.p", typespaces);
    for (std::size_t s = 0; s < 3; ++s) {
      const std::string name = kBenchmarkSplitNames[s];
      write_text_file(variant_dir / (name + ".json"), polyvore_split_json(plan, variant[s]));
      write_text_file(variant_dir / ("compatibility_" + name + ".txt"),
                      compatibility_text(plan, variant[s].compatibility));
      write_text_file(variant_dir / ("fill_in_blank_" + name + ".json"),
                      questions_json(plan, variant[s].blanks));
    }
    write_text_features(variant_dir / kTextFeatureFile, plan, variant[0]);
  }

  const fs::path maryland = dir / "maryland";
  create_folder(maryland / "images");
  for (std::size_t s = 0; s < 3; ++s) {
    write_text_file(maryland / (std::string(kBenchmarkSplitNames[s]) + "_no_dup.json"),
                    maryland_split_json(plan, plan.maryland[s]));
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
                  questions_json(plan, plan.maryland[2].blanks));
  write_text_file(maryland / "fashion-compatibility-prediction.txt",
                  compatibility_text(plan, plan.maryland[2].compatibility));
  std::string types = "categoryid,type\n";
  for (const FineCategory& c : fine_categories())
    types += fmt::format("{},{}\n", c.id, item_type_name(c.type));
  write_text_file(maryland / "category_types.csv", types);
}

}  // namespace

void ensure_outfit_benchmark(const std::filesystem::path& root_in,
                             const OutfitBenchmarkOptions& options) {
  fs::path root = fs::absolute(root_in).lexically_normal();
  if (!root.has_filename()) root = root.parent_path();
  const fs::path parent = root.parent_path();
  const std::string name = root.filename().string();
  create_folder(parent);
  const FileLock lock(parent / ("." + name + ".lock"));

  const std::string stamp = stamp_text(options);
  std::error_code ec;
  const bool root_exists = fs::exists(root, ec);
  if (root_exists) {
    if (fs::is_regular_file(root / kStampName, ec) && read_small_file(root / kStampName) == stamp)
      return;
    if (!fs::is_directory(root, ec) || !is_ours(root))
      throw Error(fmt::format(
          "{}: exists and is not an outfit benchmark this generator wrote (it has no {}); "
          "remove it or choose another root",
          root.string(), kStampName));
  }

  const fs::path staging = parent / ("." + name + ".partial");
  if (fs::exists(staging, ec)) remove_ours(staging);
  create_folder(staging);
  write_text_file(staging / kPartialMarker, "");
  try {
    write_benchmark(staging, options);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  write_text_file(staging / kStampName, stamp);
  fs::remove(staging / kPartialMarker, ec);

  if (root_exists) {
    // The previous benchmark (another preset or seed), or an empty folder, goes aside first: a
    // folder cannot be renamed over a non-empty one.
    const fs::path old = parent / ("." + name + ".old");
    if (fs::exists(old, ec)) remove_ours(old);
    fs::rename(root, old, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the previous benchmark aside ({})", root.string(),
                              ec.message()));
    fs::rename(staging, root, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the new benchmark into place ({})", root.string(),
                              ec.message()));
    remove_ours(old);
  } else {
    fs::rename(staging, root, ec);
    if (ec)
      throw Error(fmt::format("{}: cannot move the new benchmark into place ({})", root.string(),
                              ec.message()));
  }
  sync_folder(parent);
}

}  // namespace wscsl::data
