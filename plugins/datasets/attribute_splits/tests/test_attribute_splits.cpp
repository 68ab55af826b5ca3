#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "wscsl/data/image_file.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

// Ten images: 0-5 train, 6-7 valid, 8-9 test; attributes color (3 values) and shape (2 values).
void attribute_splits_write_layout(const fs::path& dir) {
  fs::create_directories(dir / "images");
  for (int i = 0; i < 10; ++i)
    write_image_file(dir / "images" / fmt::format("{}.png", i),
                     wscsl::testing::pattern_image(12, 10, static_cast<std::uint64_t>(i + 1)));
  wscsl::testing::write_text(dir / "filenames_train.txt",
                             "images/0.png\nimages/1.png\nimages/2.png\nimages/3.png\n"
                             "images/4.png\nimages/5.png\n");
  wscsl::testing::write_text(dir / "filenames_valid.txt", "images/6.png\nimages/7.png\n");
  wscsl::testing::write_text(dir / "filenames_test.txt", "images/8.png\nimages/9.png\n");
  wscsl::testing::write_text(dir / "label_train.txt",
                             "0 0 0 1 0\n1 0 0 1 1\n2 0 1 1 0\n3 0 1 1 1\n4 0 2 1 0\n5 1 1\n");
  wscsl::testing::write_text(dir / "query_valid.txt", "0 0 1\n0 1 0\n");
  wscsl::testing::write_text(dir / "candidate_valid.txt", "1 0 1\n1 1 1\n");
  wscsl::testing::write_text(dir / "query_test.txt", "1 1 0\n");
  wscsl::testing::write_text(dir / "candidate_test.txt", "0 1 0\n0 0 2\n");
}

std::string attribute_splits_body(const fs::path& dir, const std::string& extra = "") {
  return fmt::format(
      "root = \"{}\"\nimage_size = 8\ndecode_threads = 1\nepoch_triplets = 400\n{}\n", dir.string(),
      extra.empty() ? "attributes = [\"color\", \"shape\"]\nvalues = [3, 2]" : extra);
}

std::shared_ptr<Dataset> attribute_splits_build(const fs::path& dir,
                                                const std::string& extra = "") {
  return wscsl::testing::build<Dataset>("attribute_splits", attribute_splits_body(dir, extra));
}

}  // namespace

TEST(AttributeSplits, BuiltInTablesAreTheReleasedOnes) {
  wscsl::testing::ScratchDir scratch("attribute_splits");
  attribute_splits_write_layout(scratch.path());
  const DatasetInfo fashionai =
      attribute_splits_build(scratch.path(), "benchmark = \"fashionai\"")->info();
  ASSERT_EQ(fashionai.num_conditions(), 8);
  EXPECT_EQ(fashionai.conditions[6].name, "neckline_design");
  EXPECT_EQ(fashionai.conditions[6].values.size(), 10u);
  const DatasetInfo darn = attribute_splits_build(scratch.path(), "benchmark = \"darn\"")->info();
  ASSERT_EQ(darn.num_conditions(), 9);
  EXPECT_EQ(darn.conditions[2].name, "clothes_color");
  EXPECT_EQ(darn.conditions[2].values.size(), 55u);
  const DatasetInfo deepfashion =
      attribute_splits_build(scratch.path(), "benchmark = \"deepfashion\"")->info();
  ASSERT_EQ(deepfashion.num_conditions(), 5);
  EXPECT_EQ(deepfashion.conditions[4].name, "style-related");
  EXPECT_EQ(deepfashion.conditions[4].values.size(), 230u);
}

TEST(AttributeSplits, EpochTripletsFollowTheReleasedSampler) {
  wscsl::testing::ScratchDir scratch("attribute_splits");
  attribute_splits_write_layout(scratch.path());
  auto d = attribute_splits_build(scratch.path());
  const SplitData& train = d->split(Split::Train);
  ASSERT_EQ(train.triplets.size(0), 400);
  // Image id → value per attribute, from label_train.txt (train ids are the file's indices).
  const std::int64_t value[6][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {-1, 1}};
  const at::Tensor epoch = d->epoch_triplets(Split::Train, 2, 7);
  EXPECT_TRUE(epoch.equal(d->epoch_triplets(Split::Train, 2, 7)));
  EXPECT_FALSE(epoch.equal(d->epoch_triplets(Split::Train, 3, 7)));
  EXPECT_FALSE(epoch.equal(d->epoch_triplets(Split::Train, 2, 8)));
  std::set<std::int64_t> attributes_seen;
  for (std::int64_t i = 0; i < epoch.size(0); ++i) {
    const std::int64_t a = train.conditions[i].item<std::int64_t>();
    attributes_seen.insert(a);
    const std::int64_t anchor = epoch[i][0].item<std::int64_t>();
    const std::int64_t close = epoch[i][1].item<std::int64_t>();
    const std::int64_t far = epoch[i][2].item<std::int64_t>();
    ASSERT_NE(anchor, close);
    ASSERT_GE(value[anchor][a], 0);
    ASSERT_EQ(value[anchor][a], value[close][a]);
    ASSERT_GE(value[far][a], 0);
    ASSERT_NE(value[far][a], value[anchor][a]);
  }
  EXPECT_EQ(attributes_seen, (std::set<std::int64_t>{0, 1}));
  // Value 2 of color has one image: never an anchor, but a far image.
  EXPECT_FALSE(epoch.select(1, 0).eq(4).logical_and(train.conditions.eq(0)).any().item<bool>());
  EXPECT_TRUE(epoch.select(1, 2).eq(4).logical_and(train.conditions.eq(0)).any().item<bool>());
}

TEST(AttributeSplits, EvaluationSplitsAreTheQueryAndCandidateLines) {
  wscsl::testing::ScratchDir scratch("attribute_splits");
  attribute_splits_write_layout(scratch.path());
  auto d = attribute_splits_build(scratch.path());
  const SplitData& valid = d->split(Split::Val);
  ASSERT_TRUE(valid.attribute_queries.has_value());
  // The valid split's images follow the six training images.
  EXPECT_TRUE(valid.attribute_queries->queries.equal(
      torch::tensor({6, 0, 1, 6, 1, 0}, torch::kLong).view({2, 3})));
  EXPECT_TRUE(valid.attribute_queries->candidates.equal(
      torch::tensor({7, 0, 1, 7, 1, 1}, torch::kLong).view({2, 3})));
  EXPECT_EQ(valid.triplets.size(0), 0);
  EXPECT_EQ(valid.factors[6][1].item<std::int64_t>(), 0);
  const SplitData& test = d->split(Split::Test);
  EXPECT_TRUE(
      test.attribute_queries->queries.equal(torch::tensor({9, 1, 0}, torch::kLong).view({1, 3})));
  EXPECT_EQ(test.files.candidates, scratch.path() / "candidate_test.txt");
}

TEST(AttributeSplits, EveryBadLineIsNamedByFileAndLine) {
  wscsl::testing::ScratchDir scratch("attribute_splits");
  const fs::path dir = scratch.path();
  attribute_splits_write_layout(dir);
  const std::string body = attribute_splits_body(dir);
  wscsl::testing::write_text(dir / "label_train.txt", "0 0 0\n6 0 1\n");
  EXPECT_NE(wscsl::testing::load_error("attribute_splits", body)
                .find("label_train.txt:2: image index 6 is out of range"),
            std::string::npos);
  wscsl::testing::write_text(dir / "label_train.txt", "0 0 0 2 1\n");
  EXPECT_NE(wscsl::testing::load_error("attribute_splits", body)
                .find("label_train.txt:1: attribute 2 is unknown"),
            std::string::npos);
  attribute_splits_write_layout(dir);
  wscsl::testing::write_text(dir / "query_valid.txt", "0 0 1\n1 1 2\n");
  EXPECT_NE(wscsl::testing::load_error("attribute_splits", body, Split::Val)
                .find("query_valid.txt:2: value 2 of attribute 1 is out of range"),
            std::string::npos);
  wscsl::testing::write_text(dir / "query_valid.txt", "0 0\n");
  EXPECT_NE(wscsl::testing::load_error("attribute_splits", body, Split::Val)
                .find("query_valid.txt:1: expected 3 columns"),
            std::string::npos);
  attribute_splits_write_layout(dir);
  fs::remove(dir / "candidate_test.txt");
  EXPECT_NE(wscsl::testing::load_error("attribute_splits", body).find("candidate_test.txt"),
            std::string::npos);
  attribute_splits_write_layout(dir);
  fs::remove(dir / "images" / "7.png");
  EXPECT_NE(wscsl::testing::load_error("attribute_splits", body, Split::Val)
                .find("filenames_valid.txt:2:"),
            std::string::npos);
}

TEST(AttributeSplits, TheRegionBenchmarkIsGeneratedAndRead) {
  wscsl::testing::ScratchDir scratch("attribute_splits");
  const fs::path root = scratch.path() / "regions";
  auto d = attribute_splits_build(root, "benchmark = \"regions\"\ngenerated_images = [24, 8, 8]");
  const DatasetInfo info = d->info();
  ASSERT_EQ(info.num_conditions(), 4);
  EXPECT_EQ(info.conditions[0].name, "top_left_color");
  EXPECT_EQ(info.conditions[1].values, (std::vector<std::string>{"square", "disc", "cross"}));
  const SplitData& test = d->split(Split::Test);
  // A quarter of the 8 test images are queries, with a line per attribute.
  EXPECT_EQ(test.attribute_queries->queries.size(0), 2 * 4);
  EXPECT_EQ(test.attribute_queries->candidates.size(0), 6 * 4);
  const at::Tensor images = d->images(Split::Test, torch::tensor({32, 33}, torch::kLong), {});
  EXPECT_EQ(images.sizes(), (std::vector<std::int64_t>{2, 3, 8, 8}));
  EXPECT_EQ(d->epoch_triplets(Split::Train, 0, 1).size(0), 400);
}
