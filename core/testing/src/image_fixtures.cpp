#include "wscsl/testing/image_fixtures.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;

namespace wscsl::testing {

ScratchDir::ScratchDir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() / fmt::format("wscsl_{}_{}_{}", prefix, ::getpid(), counter++);
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string load_error(const std::string& type, const std::string& toml_body, Split split) {
  try {
    build<Dataset>(type, toml_body)->split(split);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

Image8 pattern_image(int width, int height, std::uint64_t seed) {
  Image8 image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<std::size_t>(width) * height * 3);
  Rng rng(seed);
  const auto base = static_cast<int>(rng.below(256));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        image.row(y)[x * 3 + c] = static_cast<std::uint8_t>((base + 37 * c + 5 * x + 3 * y) % 256);
  return image;
}

void write_text(const fs::path& path, const std::string& text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw Error(fmt::format("{}: cannot write", path.string()));
}

namespace {

void write_image(const fs::path& path, const Image8& image) {
  fs::create_directories(path.parent_path());
  write_image_file(path, image);
}

}  // namespace

void write_ut_zappos(const fs::path& dir, int images, int triplets) {
  std::string list;
  for (int i = 0; i < images; ++i) {
    const std::string file =
        fmt::format("{}/Brand{}/{}.{}", i % 2 ? "Boots/Ankle" : "Shoes/Oxfords", i % 3, i,
                    i % 2 ? "png" : "jpg");
    write_image(dir / "ut-zap50k-images" / file,
                pattern_image(20, 16, static_cast<std::uint64_t>(i)));
    list += file + "\n";
  }
  write_text(dir / "filenames.json", list);
  int split_index = 0;
  for (const char* split : {"train", "val", "test"}) {
    int condition_index = 0;
    for (const char* condition : {"class", "closure", "gender", "heel"}) {
      std::string plain, half;
      for (int t = 0; t < triplets; ++t) {
        const int a = (t + condition_index + split_index) % images;
        const int far = (a + 1 + t) % images;
        const int close =
            (a + 2 + 2 * t) % images == far ? (far + 1) % images : (a + 2 + 2 * t) % images;
        plain += fmt::format("{} {} {}\n", a, far, close);
        half += t % 2 ? fmt::format("{} {} {} 0\n", a, close, far)
                      : fmt::format("{} {} {} 1\n", a, far, close);
      }
      write_text(dir / "tripletlists" / fmt::format("{}_tripletlist_{}.txt", condition, split),
                 plain);
      write_text(dir / "tripletlists" /
                     fmt::format("{}_tripletlist_{}_half_reverse.txt", condition, split),
                 half);
      ++condition_index;
    }
    ++split_index;
  }
}

const std::vector<std::string>& celeba_fixture_attributes() {
  static const std::vector<std::string> names = {"5_o_Clock_Shadow",
                                                 "Arched_Eyebrows",
                                                 "Attractive",
                                                 "Bags_Under_Eyes",
                                                 "Bangs",
                                                 "Big_Lips",
                                                 "Big_Nose",
                                                 "Black_Hair",
                                                 "Blond_Hair",
                                                 "Brown_Hair",
                                                 "Bushy_Eyebrows",
                                                 "Eyeglasses",
                                                 "Gray_Hair",
                                                 "Male",
                                                 "Mouth_Slightly_Open",
                                                 "Narrow_Eyes",
                                                 "Pointy_Nose",
                                                 "Receding_Hairline",
                                                 "Smiling",
                                                 "Straight_Hair",
                                                 "Wavy_Hair",
                                                 "Wearing_Earrings",
                                                 "Wearing_Hat",
                                                 "Wearing_Lipstick",
                                                 "Wearing_Necklace",
                                                 "Wearing_Necktie",
                                                 "Young"};
  return names;
}

void write_celeba(const fs::path& dir, int images) {
  const std::vector<std::string>& names = celeba_fixture_attributes();
  std::string attributes = fmt::format("{}\n", images);
  for (const std::string& name : names)
    attributes += name + " ";
  attributes += "\n";
  std::string partition;
  for (int i = 0; i < images; ++i) {
    const std::string file = fmt::format("{:06d}.jpg", i + 1);
    write_image(dir / "img_align_celeba" / file,
                pattern_image(18, 22, static_cast<std::uint64_t>(100 + i)));
    attributes += file;
    for (std::size_t a = 0; a < names.size(); ++a)
      attributes += (i * 7 + static_cast<int>(a) * 3) % 5 < 2 ? "  1" : " -1";
    attributes += "\n";
    partition += fmt::format("{} {}\n", file, 3 * i / images);
  }
  write_text(dir / "list_attr_celeba.txt", attributes);
  write_text(dir / "list_eval_partition.txt", partition);
}

void write_image_folder(const fs::path& dir, int images) {
  static const char* colors[] = {"red", "green", "blue"};
  std::string csv = "file,split,color,size\n";
  for (int i = 0; i < images; ++i) {
    const std::string file = fmt::format("{}/{}.{}", i % 2 ? "a" : "b", i, i % 3 ? "png" : "jpg");
    write_image(dir / "images" / file,
                pattern_image(16 + i % 5, 18, static_cast<std::uint64_t>(200 + i)));
    const char* split = 3 * i / images == 0 ? "train" : (3 * i / images == 1 ? "val" : "test");
    csv += fmt::format("{},{},{},{}\n", file, split, colors[i % 3], 1.0 + (i * 5) % 7);
  }
  write_text(dir / "attributes.csv", csv);
}

}  // namespace wscsl::testing
