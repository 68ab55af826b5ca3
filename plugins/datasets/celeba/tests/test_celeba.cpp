#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "../src/celeba.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace fs = std::filesystem;
using namespace wscsl;
using namespace wscsl::celeba;

namespace {

class CelebaTest : public ::testing::Test {
 protected:
  void SetUp() override { wscsl::testing::write_celeba(dir_); }

  std::string body(const std::string& extra) const {
    return fmt::format(
        "root = \"{}\"\nimage_size = 8\ndecode_threads = 1\n"
        "train_triplets = 32\nval_triplets = 8\ntest_triplets = 8\n{}",
        dir_.string(), extra);
  }
  std::shared_ptr<Dataset> build(const std::string& extra = "") {
    return wscsl::testing::build<Dataset>("celeba", body(extra));
  }
  std::string error(const std::string& extra = "") {
    return wscsl::testing::load_error("celeba", body(extra));
  }
  fs::path attributes() const { return dir_ / "list_attr_celeba.txt"; }
  fs::path partition() const { return dir_ / "list_eval_partition.txt"; }
  // Replaces line `line` (1-based) of `file`.
  void replace_line(const fs::path& file, int line, const std::string& text) {
    std::vector<std::string> lines = read_lines(file);
    lines[static_cast<std::size_t>(line - 1)] = text;
    std::string all;
    for (const std::string& l : lines)
      all += l + "\n";
    wscsl::testing::write_text(file, all);
  }

  wscsl::testing::ScratchDir scratch_{"celeba"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

TEST(CelebaMerge, KeepsTheMostFrequentCombinations) {
  // Codes: 3 × 0b0001, 2 × 0b0000, 2 × 0b0110, 1 × 0b1000. Keep 2: code 1, then code 0 (a tie
  // with 6 broken by the smaller code); 6 and 8 are unknown.
  const auto [values, kept] = merge_codes({1, 0, 6, 1, 8, 0, 1, 6}, 2);
  EXPECT_EQ(kept, (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(values, (std::vector<double>{0, 1, -1, 0, -1, 1, 0, -1}));
  EXPECT_EQ(code_name(kMergedConditions[0], 0), "none");
  EXPECT_EQ(code_name(kMergedConditions[0], 5), "Black_Hair+Brown_Hair");
  for (const MergedCondition& m : kMergedConditions)
    EXPECT_TRUE(m.values >= 5 && m.values <= 7) << m.name;  // "5-7 discrete values"
}

TEST_F(CelebaTest, ThePapersEightAttributesWithinTheOfficialPartition) {
  auto d = build();
  const DatasetInfo info = d->info();
  ASSERT_EQ(info.conditions.size(), 8u);
  EXPECT_EQ(info.conditions[0].name, "5_o_Clock_Shadow");
  EXPECT_EQ(info.conditions[7].name, "Young");
  const SplitData& s = d->split(Split::Val);
  EXPECT_EQ(s.triplets.size(0), 8);
  EXPECT_EQ(s.conditions.bincount().eq(1).sum().item<std::int64_t>(), 8);  // one per condition
  // The fixture's partition puts images 10..19 in val.
  EXPECT_GE(s.triplets.min().item<std::int64_t>(), 10);
  EXPECT_LE(s.triplets.max().item<std::int64_t>(), 19);
  for (std::int64_t i = 0; i < 8; ++i) {
    const std::int64_t k = s.conditions[i].item<std::int64_t>();
    const auto value = [&](int j) { return s.factors[s.triplets[i][j]][k].item<std::int64_t>(); };
    EXPECT_EQ(value(0), value(1));
    EXPECT_NE(value(0), value(2));
  }
}

TEST_F(CelebaTest, MergedVariantHasFiveMultiValuedConditions) {
  auto d = build("variant = \"merged\"");
  const DatasetInfo info = d->info();
  ASSERT_EQ(info.conditions.size(), 5u);
  EXPECT_EQ(info.conditions[0].name, "Hair_Color");
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_GT(info.conditions[k].values.size(), 2u);
    EXPECT_LE(info.conditions[k].values.size(), kMergedConditions[k].values);
  }
  EXPECT_EQ(d->split(Split::Train).triplets.size(0), 32);
}

TEST_F(CelebaTest, WrongColumnCountNamesFileAndLine) {
  replace_line(attributes(), 5, "000003.jpg 1 -1");
  EXPECT_NE(error().find(attributes().string() + ":5: expected 28 columns"), std::string::npos)
      << error();
}

TEST_F(CelebaTest, BadValueNamesFileAndLine) {
  std::vector<std::string> lines = read_lines(attributes());
  std::string row = lines[3];
  row.replace(row.size() - 2, 2, " 0");
  replace_line(attributes(), 4, row);
  EXPECT_NE(error().find(attributes().string() + ":4: attribute Young is '0'"), std::string::npos)
      << error();
}

TEST_F(CelebaTest, CountAndHeaderMismatchesNameTheLine) {
  replace_line(attributes(), 1, "31");
  EXPECT_NE(error().find(attributes().string() + ":1: declares 31 images but 30 rows follow"),
            std::string::npos)
      << error();
  replace_line(attributes(), 1, "30");
  EXPECT_NE(error("conditions = [\"Blue_Eyes\"]")
                .find(attributes().string() + ":2: no attribute 'Blue_Eyes'"),
            std::string::npos);
}

TEST_F(CelebaTest, PartitionRowsAreChecked) {
  replace_line(partition(), 3, "000003.jpg 7");
  EXPECT_NE(error().find(partition().string() + ":3: partition '7' is not 0, 1 or 2"),
            std::string::npos)
      << error();
  replace_line(partition(), 3, "999999.jpg 0");
  EXPECT_NE(error().find(partition().string() + ":3: image '999999.jpg' is not in"),
            std::string::npos)
      << error();
  auto d = build("max_bad_rows = 1");
  EXPECT_EQ(d->attributes(Split::Train)->members.numel(), 9);  // the skipped row's image is in none
  // The partition is read when the dataset is made; the warning comes with the first split.
  ::testing::internal::CaptureStderr();
  d->split(Split::Train);
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find(fmt::format("skipped 1 bad row of {} (max_bad_rows = 1); the first: "
                                    "{}:3: image '999999.jpg' is not in",
                                    partition().string(), partition().string())),
            std::string::npos)
      << warned;
}

TEST_F(CelebaTest, TruncatedImageNamesTheAttributeLine) {
  const fs::path image = dir_ / "img_align_celeba" / "000002.jpg";
  fs::resize_file(image, fs::file_size(image) - 10);
  const std::string e = error();
  EXPECT_NE(e.find(attributes().string() + ":4: image '000002.jpg'"), std::string::npos) << e;
}
