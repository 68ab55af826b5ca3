// Tiny datasets on disk in the real layouts (UT-Zappos-50k as CSN released it, Celeb-A, an image
// folder with an attribute CSV), written by tests with a few generated JPEG and PNG images.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "wscsl/data/image_file.hpp"
#include "wscsl/plugin/dataset.hpp"

namespace wscsl::testing {

// A fresh directory under the system's temporary directory, named after `prefix`, the process and
// a counter; removed with everything in it when the object goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The message of the DataError that loading `split` of the dataset built by
// wscsl::testing::build<Dataset>(type, toml_body) throws (at construction or while loading), or
// "(no error)".
std::string load_error(const std::string& type, const std::string& toml_body,
                       Split split = Split::Train);

// A width × height RGB image whose pixels are a deterministic function of `seed`.
Image8 pattern_image(int width, int height, std::uint64_t seed);

// Writes `text` to `path`, creating its directory.
void write_text(const std::filesystem::path& path, const std::string& text);

// UT-Zappos-50k: <dir>/filenames.json listing `images` files under <dir>/ut-zap50k-images/
// (JPEG and PNG alternating, 20 × 16 pixels, in sub-folders as the real release), and for each
// of class, closure, gender, heel and each split `triplets` lines "anchor far close" plus the
// `_half_reverse` variant (every other line reversed, 4th column 0).
void write_ut_zappos(const std::filesystem::path& dir, int images = 12, int triplets = 6);

// The Celeb-A attributes the fixtures label: the paper's 8 and the 20 of Celeb-A†'s merged
// conditions, in list_attr_celeba.txt's order.
const std::vector<std::string>& celeba_fixture_attributes();

// Celeb-A: <dir>/list_attr_celeba.txt (count line, header line, "000001.jpg  1 -1 …" rows),
// <dir>/list_eval_partition.txt (splits 0, 1, 2 in blocks) and <dir>/img_align_celeba/*.jpg
// (18 × 22 pixels, the real aspect ratio). Attribute values vary with the image number.
void write_celeba(const std::filesystem::path& dir, int images = 30);

// An image folder: <dir>/images/{a,b}/<n>.png|jpg and <dir>/attributes.csv with columns
// file, split, color (red/green/blue), size (a number) — `images` rows, splits in blocks.
void write_image_folder(const std::filesystem::path& dir, int images = 24);

}  // namespace wscsl::testing
