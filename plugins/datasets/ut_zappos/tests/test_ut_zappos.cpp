#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "../src/ut_zappos.hpp"
#include "wscsl/data/csn_layout.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

class UtZapposTest : public ::testing::Test {
 protected:
  void SetUp() override { wscsl::testing::write_ut_zappos(dir_); }

  std::string body(const std::string& extra) const {
    return fmt::format("root = \"{}\"\nimage_size = 16\ndecode_threads = 1\n{}", dir_.string(),
                       extra);
  }
  std::shared_ptr<Dataset> build(const std::string& extra = "") {
    return wscsl::testing::build<Dataset>("ut_zappos", body(extra));
  }
  // The message of the DataError that loading `split` throws.
  std::string load_error(const std::string& extra = "", Split split = Split::Train) {
    return wscsl::testing::load_error("ut_zappos", body(extra), split);
  }
  fs::path list(const std::string& name) const { return dir_ / "tripletlists" / name; }
  void append(const fs::path& file, const std::string& text) {
    std::ofstream(file, std::ios::app) << text;
  }
  void replace_image_line(int line, const std::string& path) {
    std::vector<std::string> lines = read_lines(dir_ / "filenames.json");
    lines[static_cast<std::size_t>(line - 1)] = path;
    std::string text;
    for (const std::string& l : lines)
      text += l + "\n";
    wscsl::testing::write_text(dir_ / "filenames.json", text);
  }
  std::string image_path(int line) const {
    return (dir_ / "ut-zap50k-images" / read_lines(dir_ / "filenames.json")[line - 1]).string();
  }

  wscsl::testing::ScratchDir scratch_{"ut_zappos"};
  const fs::path dir_ = scratch_.path();
};

std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> rows(
    const SplitData& s) {
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> out;
  for (std::int64_t i = 0; i < s.triplets.size(0); ++i)
    out.emplace(s.triplets[i][0].item<std::int64_t>(), s.triplets[i][1].item<std::int64_t>(),
                s.triplets[i][2].item<std::int64_t>(), s.conditions[i].item<std::int64_t>());
  return out;
}

}  // namespace

TEST_F(UtZapposTest, ReadsEveryListInTheTrueOrder) {
  auto d = build("train_triplets = 0");
  const SplitData& s = d->split(Split::Train);
  ASSERT_EQ(s.triplets.size(0), 24);  // 4 conditions × 6 lines
  EXPECT_EQ(s.num_images, 12);
  // The fixture's first class line is "0 1 2": anchor 0, far 1, close 2.
  EXPECT_EQ(rows(s).count({0, 2, 1, 0}), 1u);
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> expected;
  const std::vector<std::string> conditions = {"class", "closure", "gender", "heel"};
  for (std::size_t k = 0; k < 4; ++k)
    for (const std::string& line : read_lines(list(conditions[k] + "_tripletlist_train.txt"))) {
      const auto t = tokens(line);
      expected.emplace(*parse_id(t[0]), *parse_id(t[2]), *parse_id(t[1]), k);
    }
  EXPECT_EQ(rows(s), expected);
  EXPECT_FALSE(s.reversed.defined());
}

TEST_F(UtZapposTest, HalfReverseListsGiveTheSameTripletsWithTheirFlags) {
  const SplitData plain = build("train_triplets = 0")->split(Split::Val);
  auto half = build("train_triplets = 0\nval_triplets = 0\nhalf_reverse = true");
  const SplitData& s = half->split(Split::Val);
  ASSERT_TRUE(s.reversed.defined());
  EXPECT_EQ(s.reversed.sum().item<std::int64_t>(), 12);  // every other line of 24
  auto all = build("val_triplets = 0");
  EXPECT_EQ(rows(s), rows(all->split(Split::Val)));
  (void)plain;
}

TEST_F(UtZapposTest, SubsetSizeAndSeed) {
  auto a = build("train_triplets = 5\nseed = 1");
  auto b = build("train_triplets = 5\nseed = 1");
  auto c = build("train_triplets = 5\nseed = 2");
  EXPECT_EQ(a->split(Split::Train).triplets.size(0), 5);
  EXPECT_TRUE(a->split(Split::Train).triplets.equal(b->split(Split::Train).triplets));
  EXPECT_FALSE(a->split(Split::Train).triplets.equal(c->split(Split::Train).triplets));
}

TEST_F(UtZapposTest, ImagesFollowTheReferencePipelineAndAreDecodedOnce) {
  auto d = build("normalize = \"none\"");
  d->split(Split::Test);
  const auto* image_dataset = dynamic_cast<ImageDataset*>(d.get());
  ASSERT_NE(image_dataset, nullptr);
  const std::int64_t decoded = image_dataset->decoded_images();
  EXPECT_GT(decoded, 0);
  const at::Tensor ids = torch::tensor({3, 4}, torch::kLong);
  const at::Tensor got = d->images(Split::Test, ids, {});
  EXPECT_EQ(image_dataset->decoded_images(), decoded);  // served from the store
  for (int i = 0; i < 2; ++i) {
    const DecodedImage file = read_image_file(image_path(4 + i), kDefaultMaxImagePixels);
    ASSERT_TRUE(file.problem.empty()) << file.problem;
    std::vector<std::uint8_t> expected(3 * 16 * 16);
    resize_and_center_crop(file.image, 16, expected.data());
    const at::Tensor want =
        torch::from_blob(expected.data(), {3, 16, 16}, torch::kUInt8).to(torch::kFloat) / 255;
    EXPECT_TRUE(torch::allclose(got[i], want)) << "image " << 3 + i;
  }
  // ImageNet normalisation of the same pixels.
  auto n = build();
  const at::Tensor normalized = n->images(Split::Test, ids, {});
  const at::Tensor mean = torch::tensor({0.485, 0.456, 0.406}).view({1, 3, 1, 1});
  const at::Tensor std = torch::tensor({0.229, 0.224, 0.225}).view({1, 3, 1, 1});
  EXPECT_TRUE(torch::allclose(normalized, (got - mean) / std, 1e-5, 1e-6));
}

TEST_F(UtZapposTest, TrainingFlipsEachImageOnItsOwn) {
  auto d = build("normalize = \"none\"");
  const at::Tensor ids = torch::arange(12, torch::kLong);
  const at::Tensor plain = d->images(Split::Train, ids, {});
  ImageRequest request;
  request.augment = true;
  request.seed = 11;
  const at::Tensor augmented = d->images(Split::Train, ids, request);
  int flipped = 0;
  for (std::int64_t i = 0; i < 12; ++i) {
    const bool same = augmented[i].equal(plain[i]);
    const bool mirrored = augmented[i].equal(plain[i].flip({2}));
    EXPECT_TRUE(same || mirrored) << i;
    flipped += mirrored && !same;
  }
  EXPECT_GT(flipped, 0);
  EXPECT_LT(flipped, 12);
  EXPECT_TRUE(augmented.equal(d->images(Split::Train, ids, request)));  // a function of the seed
}

TEST_F(UtZapposTest, WrongColumnCountNamesFileAndLine) {
  append(list("gender_tripletlist_train.txt"), "1 2\n");
  const std::string e = load_error();
  EXPECT_NE(e.find(list("gender_tripletlist_train.txt").string() + ":7: expected 3 columns"),
            std::string::npos)
      << e;
}

TEST_F(UtZapposTest, IdOutOfRangeNamesFileAndLine) {
  append(list("heel_tripletlist_val.txt"), "1 2 12\n");
  const std::string e = load_error("", Split::Val);
  EXPECT_NE(e.find(list("heel_tripletlist_val.txt").string() + ":7: image id 12 is out of range"),
            std::string::npos)
      << e;
}

TEST_F(UtZapposTest, NonIntegerIdNamesFileAndLine) {
  append(list("class_tripletlist_train.txt"), "1 -2 3\n");
  const std::string e = load_error();
  EXPECT_NE(e.find(list("class_tripletlist_train.txt").string() + ":7: column 2 is '-2'"),
            std::string::npos)
      << e;
}

TEST_F(UtZapposTest, BadReverseLabelNamesFileAndLine) {
  append(list("class_tripletlist_train_half_reverse.txt"), "1 2 3 0.5\n");
  const std::string e = load_error("half_reverse = true");
  EXPECT_NE(e.find(list("class_tripletlist_train_half_reverse.txt").string() +
                   ":7: the 4th column is '0.5'"),
            std::string::npos)
      << e;
}

TEST_F(UtZapposTest, MissingImageNamesTheListLine) {
  fs::remove(image_path(1));
  const std::string e = load_error();
  EXPECT_NE(e.find((dir_ / "filenames.json").string() + ":1: no such file"), std::string::npos)
      << e;
}

TEST_F(UtZapposTest, PathsLeavingTheRootAreRefused) {
  replace_image_line(1, "../outside.jpg");
  EXPECT_NE(
      load_error().find((dir_ / "filenames.json").string() + ":1: path '../outside.jpg' leaves"),
      std::string::npos);
  replace_image_line(1, image_path(2));
  EXPECT_NE(load_error().find((dir_ / "filenames.json").string() + ":1: absolute path"),
            std::string::npos);
  const fs::path outside = dir_.string() + "_outside.jpg";
  fs::copy_file(image_path(3), outside, fs::copy_options::overwrite_existing);
  fs::create_symlink(outside, dir_ / "ut-zap50k-images" / "link.jpg");
  replace_image_line(1, "link.jpg");
  const std::string e = load_error();
  fs::remove(outside);
  EXPECT_NE(e.find((dir_ / "filenames.json").string() + ":1: 'link.jpg' is a link to"),
            std::string::npos)
      << e;
}

TEST_F(UtZapposTest, CorruptAndTruncatedImagesNameTheListLine) {
  wscsl::testing::write_text(image_path(1), "not an image at all");
  EXPECT_NE(load_error().find((dir_ / "filenames.json").string() + ":1: image '"),
            std::string::npos);
  fs::remove_all(dir_);
  wscsl::testing::write_ut_zappos(dir_);
  const std::string jpeg = image_path(1);
  const std::uintmax_t size = fs::file_size(jpeg);
  fs::resize_file(jpeg, size / 2);
  const std::string e = load_error();
  EXPECT_NE(e.find((dir_ / "filenames.json").string() + ":1: image '"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST_F(UtZapposTest, BadRowsAreSkippedUpToTheLimit) {
  append(list("class_tripletlist_train.txt"), "1 2\n");
  append(list("closure_tripletlist_train.txt"), "1 2 99\n");
  fs::remove(image_path(1));  // image 0 is in several triplets
  auto d = build("train_triplets = 0\nmax_bad_rows = 3");
  ::testing::internal::CaptureStderr();
  const SplitData& s = d->split(Split::Train);
  const std::string warned = ::testing::internal::GetCapturedStderr();
  const auto* image_dataset = dynamic_cast<ImageDataset*>(d.get());
  EXPECT_EQ(image_dataset->bad_rows().count(), 3);
  // One warning per file, with its count and its first skipped row.
  for (const auto& [file, line] :
       {std::pair{list("class_tripletlist_train.txt"), 7},
        std::pair{list("closure_tripletlist_train.txt"), 7}, std::pair{dir_ / "filenames.json", 1}})
    EXPECT_NE(warned.find(fmt::format(
                  "skipped 1 bad row of {} (max_bad_rows = 3); the first: {}:{}: ", file.string(),
                  file.string(), line)),
              std::string::npos)
        << warned;
  // Told once: loading another split repeats none of them.
  ::testing::internal::CaptureStderr();
  d->split(Split::Val);
  const std::string again = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(again.find("bad row"), std::string::npos) << again;
  EXPECT_EQ((s.triplets == 0).sum().item<std::int64_t>(), 0);  // no triplet uses image 0
  EXPECT_LT(s.triplets.size(0), 24);
  const std::string e = load_error("max_bad_rows = 2");
  EXPECT_NE(e.find("(bad row 3; max_bad_rows = 2 were skipped already)"), std::string::npos) << e;
}

TEST_F(UtZapposTest, CacheBoundRefusesADatasetThatDoesNotFit) {
  // 12 images of 3 × 400 × 400 bytes need 5.5 MiB.
  auto d = wscsl::testing::build<Dataset>(
      "ut_zappos", fmt::format("root = \"{}\"\nimage_size = 400\ncache_limit_mb = 1\n"
                               "decode_threads = 1\ntrain_triplets = 0\n",
                               dir_.string()));
  try {
    d->split(Split::Train);
    FAIL() << "expected the store to refuse";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("cache_limit_mb"), std::string::npos) << e.what();
  }
}

TEST_F(UtZapposTest, MissingFilesAreReportedWhenBuilt) {
  fs::remove(list("heel_tripletlist_test.txt"));
  try {
    build();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("heel_tripletlist_test.txt: no such file"),
              std::string::npos)
        << e.what();
  }
}
