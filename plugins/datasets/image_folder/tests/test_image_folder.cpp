#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <regex>

#include "../src/image_folder.hpp"
#include "wscsl/data/csv.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

class ImageFolderTest : public ::testing::Test {
 protected:
  void SetUp() override { wscsl::testing::write_image_folder(dir_); }

  std::string body(const std::string& extra) const {
    return fmt::format(
        "root = \"{}\"\nattributes = \"{}\"\nimage_size = 8\ndecode_threads = 1\n"
        "train_triplets = 40\nval_triplets = 10\ntest_triplets = 10\n{}",
        (dir_ / "images").string(), csv().string(), extra);
  }
  std::shared_ptr<Dataset> build(const std::string& extra = "") {
    return wscsl::testing::build<Dataset>("image_folder", body(extra));
  }
  std::string error(const std::string& extra = "") {
    return wscsl::testing::load_error("image_folder", body(extra));
  }
  fs::path csv() const { return dir_ / "attributes.csv"; }
  void append(const std::string& text) { std::ofstream(csv(), std::ios::app) << text; }

  wscsl::testing::ScratchDir scratch_{"image_folder"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

TEST_F(ImageFolderTest, DescribesTheAttributeColumnsAsConditions) {
  auto d = build("numeric = [\"size\"]");
  const DatasetInfo info = d->info();
  ASSERT_EQ(info.conditions.size(), 2u);
  EXPECT_EQ(info.conditions[0].name, "color");
  EXPECT_EQ(info.conditions[0].values, (std::vector<std::string>{"blue", "green", "red"}));
  EXPECT_FALSE(info.conditions[0].numeric);
  EXPECT_EQ(info.conditions[1].name, "size");
  EXPECT_TRUE(info.conditions[1].numeric);
  EXPECT_EQ(info.conditions[1].values.front(), "1");
  EXPECT_EQ(info.height, 8);
}

TEST_F(ImageFolderTest, DeclaresHowItPreparesImagesAsItDoes) {
  for (const PixelNormalization normalization :
       {PixelNormalization::ImageNet, PixelNormalization::None}) {
    const bool imagenet = normalization == PixelNormalization::ImageNet;
    auto d = build(fmt::format(
        "normalize = \"{}\"\ncache_dir = \"{}\"\ncache_limit_mb = 7\nmax_image_pixels = 4096",
        imagenet ? "imagenet" : "none", (dir_ / "cache").string()));
    const ImagePreparation p = d->info().images;
    EXPECT_EQ(p.files, FilePreparation::ResizeCenterCrop);
    EXPECT_EQ(p.normalization, normalization);
    EXPECT_EQ(p.size, 8);
    EXPECT_EQ(p.max_image_pixels, 4096);
    EXPECT_EQ(p.cache_dir, dir_ / "cache");
    EXPECT_EQ(p.cache_limit_bytes, 7 << 20);
    // An image file prepared as declared is the model input the dataset gives for it, and
    // shown_pixels undoes it to x/255 (within float rounding of the normalisation's inverse).
    const SplitAttributes a = *d->attributes(Split::Train);
    const std::int64_t id = a.members[0].item<std::int64_t>();
    const DecodedImage decoded =
        read_image_file(a.image_root / a.files[static_cast<std::size_t>(id)], p.max_image_pixels);
    ASSERT_TRUE(decoded.problem.empty()) << decoded.problem;
    torch::Tensor pixels = torch::empty({1, 3, p.size, p.size}, torch::kUInt8);
    resize_and_center_crop(decoded.image, static_cast<int>(p.size),
                           pixels.data_ptr<std::uint8_t>());
    const torch::Tensor given = d->images(Split::Train, torch::tensor({id}), {});
    EXPECT_TRUE(model_input(p, pixels).equal(given)) << imagenet;
    EXPECT_TRUE(torch::allclose(shown_pixels(p, given), pixels.to(torch::kFloat) / 255, 0, 1e-6))
        << imagenet;
  }
}

TEST_F(ImageFolderTest, DrawnTripletsFollowTheRuleWithinTheSplit) {
  auto d = build("numeric = [\"size\"]\nclose_within = 1\nfar_beyond = 2");
  const SplitData& s = d->split(Split::Train);
  ASSERT_EQ(s.triplets.size(0), 40);
  EXPECT_EQ((s.conditions == 0).sum().item<std::int64_t>(), 20);
  const CsvTable table = [&] {
    BadRows none;
    return read_csv(csv(), none);
  }();
  for (std::int64_t i = 0; i < 40; ++i) {
    const auto row = [&](int j) {
      return table.rows[static_cast<std::size_t>(s.triplets[i][j].item<std::int64_t>())];
    };
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(row(j)[1], "train");
    if (s.conditions[i].item<std::int64_t>() == 0) {
      EXPECT_EQ(row(0)[2], row(1)[2]);
      EXPECT_NE(row(0)[2], row(2)[2]);
    } else {
      const double a = std::stod(row(0)[3]), c = std::stod(row(1)[3]), f = std::stod(row(2)[3]);
      EXPECT_LE(std::abs(a - c), 1.0);
      EXPECT_GT(std::abs(a - f), 2.0);
    }
  }
  // Factors: the colour's value index, the size's rank among the distinct sizes.
  EXPECT_EQ(s.factors.size(0), 24);
  EXPECT_EQ(s.factors[0][0].item<std::int64_t>(), 2);  // red
  EXPECT_EQ(s.factors[0][1].item<std::int64_t>(), 0);  // size 1, the smallest
}

TEST_F(ImageFolderTest, OffersItsAttributesToMakeTriplets) {
  auto d = build();
  const auto a = d->attributes(Split::Val);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->members.numel(), 8);
  EXPECT_EQ(a->files.size(), 24u);
  EXPECT_EQ(a->files[1], "a/1.png");
}

TEST_F(ImageFolderTest, WrongFieldCountNamesFileAndLine) {
  append("b/x.png,train,red\n");
  EXPECT_NE(error().find(csv().string() + ":26: expected 4 fields"), std::string::npos) << error();
}

TEST_F(ImageFolderTest, BadSplitAndNumberNameFileAndLine) {
  append("b/x.png,training,red,1\n");
  EXPECT_NE(error().find(csv().string() + ":26: split 'training' is not train, val or test"),
            std::string::npos)
      << error();
  fs::remove_all(dir_);
  wscsl::testing::write_image_folder(dir_);
  append("b/x.png,train,red,tall\n");
  EXPECT_NE(error("numeric = [\"size\"]").find(csv().string() + ":26: column 'size' is 'tall'"),
            std::string::npos);
}

TEST_F(ImageFolderTest, MissingColumnNamesTheHeader) {
  EXPECT_NE(
      error("file_column = \"path\"").find(csv().string() + ":1: the header has no column 'path'"),
      std::string::npos);
}

TEST_F(ImageFolderTest, UnreadableImageNamesTheCsvLine) {
  append("b/missing.png,train,red,1\n");
  const std::string e = error();
  EXPECT_NE(e.find(csv().string() + ":26: no such file"), std::string::npos) << e;
}

TEST_F(ImageFolderTest, SkippedRowsAreCounted) {
  append("b/x.png,train,red\nb/y.png,nope,red,1\n");
  auto d = build("max_bad_rows = 2");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(d->split(Split::Train).num_images, 24);
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(dynamic_cast<ImageDataset&>(*d).bad_rows().count(), 2);
  // The user is told, once, with the count and the first skipped row.
  EXPECT_NE(warned.find(fmt::format(
                "skipped 2 bad rows of {} (max_bad_rows = 2); the first: {}:26: ", csv().string(),
                csv().string())),
            std::string::npos)
      << warned;
  ::testing::internal::CaptureStderr();
  d->split(Split::Test);
  EXPECT_EQ(::testing::internal::GetCapturedStderr().find("bad row"), std::string::npos);
}

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_F(ImageFolderTest, AConditionWithOneValueIsRefusedAtTheCsvsHeader) {
  // Every row's size becomes 4: one value, in the categorical and in the numeric reading.
  wscsl::testing::write_text(csv(),
                             std::regex_replace(read_all(csv()), std::regex(",[0-9.]+\n"), ",4\n"));
  for (const std::string& extra : {std::string(), std::string("numeric = [\"size\"]")}) {
    const std::string message = error(extra);
    EXPECT_NE(message.find(csv().string() + ":1: column 'size' has the one value '4' in every row"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("leave it out of `conditions`"), std::string::npos) << message;
  }
  // Leaving it out is the remedy.
  EXPECT_EQ(error("conditions = [\"color\"]"), "(no error)");
}

TEST_F(ImageFolderTest, AConditionWithOneValueInASplitNamesTheCsvAndTheSplit) {
  // The fixture's test rows are its last third; give them all the colour red.
  std::string text = read_all(csv());
  text = std::regex_replace(text, std::regex(",test,(red|green|blue),"), ",test,red,");
  wscsl::testing::write_text(csv(), text);
  const std::string message = wscsl::testing::load_error("image_folder", body(""), Split::Test);
  EXPECT_NE(message.find(csv().string() + ": the test split (its rows of column 'split'): cannot "
                                          "draw triplets for condition 'color'"),
            std::string::npos)
      << message;
}
