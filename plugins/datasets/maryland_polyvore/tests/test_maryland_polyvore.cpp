#include <gtest/gtest.h>
#include <algorithm>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "../src/maryland_polyvore.hpp"
#include "wscsl/data/item_text.hpp"
#include "wscsl/data/outfit_benchmark.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/memory_limit.hpp"
#include "wscsl/testing/outfit_fixtures.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;
using namespace wscsl;
using nlohmann::json;

namespace {

std::vector<std::int64_t> values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return {c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()};
}

class MarylandPolyvoreTest : public ::testing::Test {
 protected:
  void SetUp() override { fixture_ = wscsl::testing::write_maryland_polyvore(dir_); }

  std::string body(const std::string& extra = "") const {
    return fmt::format(
        "root = \"{}\"\ncategory_types = \"category_types.csv\"\nimage_size = 8\n"
        "decode_threads = 1\n{}",
        dir_.string(), extra);
  }
  std::shared_ptr<Dataset> build(const std::string& extra = "") {
    return wscsl::testing::build<Dataset>("maryland_polyvore", body(extra));
  }
  std::string load_error(Split split = Split::Train, const std::string& extra = "") {
    return wscsl::testing::load_error("maryland_polyvore", body(extra), split);
  }
  std::int64_t image(const std::string& item) const {
    return wscsl::testing::fixture_image(fixture_.outfits, item);
  }
  // Checks the test split's lines and questions against `f`.
  void expect_tasks(const OutfitData& o, const wscsl::testing::FixtureSplit& f) {
    EXPECT_EQ(values(o.compatibility.labels), f.labels);
    std::vector<std::int64_t> items;
    for (const auto& line : f.lines)
      for (const std::string& key : line)
        items.push_back(image(key));
    EXPECT_EQ(values(o.compatibility.outfits.items), items);
    ASSERT_EQ(o.blanks.questions.size(), static_cast<std::int64_t>(f.questions.size()));
    for (std::size_t q = 0; q < f.questions.size(); ++q) {
      const auto qi = static_cast<std::int64_t>(q);
      EXPECT_EQ(o.blanks.answers[qi].item<std::int64_t>(), f.questions[q].answer);
      EXPECT_EQ(o.blanks.blank_positions[qi].item<std::int64_t>(), f.questions[q].blank_position);
      for (std::int64_t a = 0; a < 4; ++a)
        EXPECT_EQ(o.blanks.candidates[qi][a].item<std::int64_t>(),
                  image(f.questions[q].answers[static_cast<std::size_t>(a)]));
    }
  }

  wscsl::testing::ScratchDir scratch_{"maryland_polyvore"};
  const fs::path dir_ = scratch_.path();
  wscsl::testing::MarylandFixture fixture_;
};

}  // namespace

TEST_F(MarylandPolyvoreTest, EveryUnorderedTypePairIsACondition) {
  const DatasetInfo info = build()->info();
  EXPECT_EQ(info.item_types, (std::vector<std::string>{"bottoms", "scarves", "shoes", "tops"}));
  ASSERT_EQ(info.num_conditions(), 10);
  EXPECT_EQ(info.conditions[0].name, "bottoms+bottoms");
  EXPECT_EQ(info.conditions[1].name, "bottoms+scarves");
  EXPECT_EQ(info.conditions[9].name, "tops+tops");
}

TEST_F(MarylandPolyvoreTest, EveryItemOfEveryOutfitIsItsOwnImage) {
  auto d = build("normalize = \"none\"");
  const SplitData& s = d->split(Split::Train);
  EXPECT_EQ(s.num_images, static_cast<std::int64_t>(fixture_.outfits.image_order.size()));
  const std::vector<std::int64_t> types = values(s.outfits->item_types);
  const std::vector<std::string> sorted = {"bottoms", "scarves", "shoes", "tops"};
  for (std::size_t i = 0; i < types.size(); ++i)
    EXPECT_EQ(sorted[static_cast<std::size_t>(types[i])],
              fixture_.outfits.item_type.at(fixture_.outfits.image_order[i]));
  const std::string& set_id = fixture_.outfits.splits.at(Split::Val).set_ids[1];
  const std::string key = set_id + "_4";  // the third item: indices skip 3
  const at::Tensor got = d->images(Split::Val, torch::tensor({image(key)}, torch::kLong), {});
  const DecodedImage file = read_image_file(dir_ / "images" / set_id / "4.jpg", 1 << 20);
  ASSERT_TRUE(file.problem.empty()) << file.problem;
  std::vector<std::uint8_t> want(3 * 8 * 8);
  resize_and_center_crop(file.image, 8, want.data());
  EXPECT_TRUE(got.equal(
      torch::from_blob(want.data(), {1, 3, 8, 8}, torch::kUInt8).to(torch::kFloat).div(255)));
}

TEST_F(MarylandPolyvoreTest, TrainingTripletsAreTheOutfitPairsWithTypePairConditions) {
  auto d = build("held_out_types = [\"scarves\"]");
  const SplitData& s = d->split(Split::Train);
  const auto pairs =
      wscsl::testing::naive_outfit_pairs(fixture_.outfits, Split::Train, {"scarves"});
  ASSERT_EQ(s.triplets.size(0), static_cast<std::int64_t>(pairs.size()));
  const std::vector<std::int64_t> types = values(s.outfits->item_types);
  const at::Tensor m = s.outfits->type_pair_conditions;
  const at::Tensor epoch = d->epoch_triplets(Split::Train, 3, 1);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto t = static_cast<std::int64_t>(i);
    EXPECT_EQ(epoch[t][0].item<std::int64_t>(), pairs[i].anchor);
    EXPECT_EQ(epoch[t][1].item<std::int64_t>(), pairs[i].close);
    const auto far = static_cast<std::size_t>(epoch[t][2].item<std::int64_t>());
    EXPECT_EQ(types[far], types[static_cast<std::size_t>(pairs[i].close)]);
    EXPECT_NE(static_cast<std::int64_t>(far), pairs[i].close);
    EXPECT_EQ(s.conditions[t].item<std::int64_t>(),
              m[types[static_cast<std::size_t>(pairs[i].anchor)]]
               [types[static_cast<std::size_t>(pairs[i].close)]]
                   .item<std::int64_t>());
  }
  EXPECT_FALSE(epoch.equal(d->epoch_triplets(Split::Train, 4, 1)));
  EXPECT_TRUE(
      epoch.equal(build("held_out_types = [\"scarves\"]")->epoch_triplets(Split::Train, 3, 1)));
}

TEST_F(MarylandPolyvoreTest, HansTestFilesTakeAnswersFirst) {
  auto d = build();
  const OutfitData& o = *d->split(Split::Test).outfits;
  expect_tasks(o, fixture_.outfits.splits.at(Split::Test));
  for (std::int64_t a : values(o.blanks.answers))
    EXPECT_EQ(a, 0);
  EXPECT_EQ(d->split(Split::Val).outfits->compatibility.outfits.size(), 0);
  EXPECT_EQ(d->split(Split::Val).outfits->blanks.questions.size(), 0);
}

TEST_F(MarylandPolyvoreTest, VasilevasSameTypeFilesResolveTheAnswerBySetId) {
  auto d = build(
      "same_type_compatibility = \"same_type/compatibility_test.txt\"\n"
      "same_type_fitb = \"same_type/fill_in_blank_test.json\"");
  const OutfitData& o = *d->split(Split::Test).outfits;
  expect_tasks(o, fixture_.same_type);
  const std::vector<std::int64_t> answers = values(o.blanks.answers);
  EXPECT_GT(std::set<std::int64_t>(answers.begin(), answers.end()).size(), 1u);
}

TEST_F(MarylandPolyvoreTest, TextsAreTheNormalisedNamesAndTheTypes) {
  const fs::path valid = dir_ / "valid_no_dup.json";
  json doc = json::parse(read_text_file(valid));
  doc[0]["items"][0]["name"] = "\tNo\u00ebl Wool\nCoat ";
  doc[0]["items"][1]["name"] = "";
  wscsl::testing::write_text(valid, doc.dump());
  // Every item's name and type, by <set_id>_<index>.
  std::map<std::string, std::string> names;
  for (const char* file : {"train_no_dup.json", "valid_no_dup.json", "test_no_dup.json"})
    for (const json& o : json::parse(read_text_file(dir_ / file)))
      for (const json& i : o.at("items"))
        names[o.at("set_id").get<std::string>() + "_" + std::to_string(i.at("index").get<int>())] =
            i.at("name").get<std::string>();
  auto d = build();
  EXPECT_EQ(d->info().text_fields, (std::vector<std::string>{"title", "category"}));
  EXPECT_TRUE(d->contract().provides_resource(Resource::ItemText, "title"));
  EXPECT_TRUE(d->contract().provides_resource(Resource::ItemText, "category"));
  const SplitData& s = d->split(Split::Val);
  const std::vector<std::string>& titles = s.texts.at("title");
  const std::vector<std::string>& categories = s.texts.at("category");
  ASSERT_EQ(static_cast<std::int64_t>(titles.size()), s.num_images);
  ASSERT_EQ(static_cast<std::int64_t>(categories.size()), s.num_images);
  const std::string set0 = fixture_.outfits.splits.at(Split::Val).set_ids[0];
  const std::string first = fixture_.outfits.splits.at(Split::Val).outfits[0][0];
  const std::string second = fixture_.outfits.splits.at(Split::Val).outfits[0][1];
  EXPECT_EQ(titles[static_cast<std::size_t>(image(first))], "nol woolcoat");
  EXPECT_EQ(titles[static_cast<std::size_t>(image(second))], "");
  for (const std::string& key : fixture_.outfits.image_order) {
    const auto id = static_cast<std::size_t>(image(key));
    if (key != first && key != second) {
      EXPECT_EQ(titles[id], names.at(key)) << key;  // "item <p>", already normal
    }
    EXPECT_EQ(categories[id], fixture_.outfits.item_type.at(key)) << key;
  }
}

TEST_F(MarylandPolyvoreTest, EveryMalformedFileIsOneSentenceNamingFileRecordAndField) {
  const std::string train = (dir_ / "train_no_dup.json").string();
  const std::string csv = (dir_ / "category_types.csv").string();
  const std::string set0 = fixture_.outfits.splits.at(Split::Train).set_ids[0];
  const auto edit_json = [&](const fs::path& path, const std::function<void(json&)>& edit) {
    return [=] {
      json doc = json::parse(read_text_file(path));
      edit(doc);
      wscsl::testing::write_text(path, doc.dump());
    };
  };
  struct Case {
    std::function<void()> damage;
    Split split;
    std::string extra, expected;
  };
  const std::vector<Case> cases = {
      {edit_json(train, [](json& d) { d[0]["items"][1].erase("categoryid"); }), Split::Train, "",
       train + ": outfit 0 (set_id '" + set0 +
           "'): has no items[1].categoryid; expected an integer"},
      {edit_json(train, [](json& d) { d[0]["items"][1]["categoryid"] = 77; }), Split::Train, "",
       train + " (outfit 0, set_id '" + set0 + "'): the item of index 2 has categoryid 77, which " +
           csv + " does not map to a type"},
      {edit_json(train, [](json& d) { d[0]["items"][1].erase("name"); }), Split::Train, "",
       train + ": outfit 0 (set_id '" + set0 + "'): has no items[1].name; expected a string"},
      {edit_json(train, [](json& d) { d[0]["items"][0]["name"] = 3; }), Split::Train, "",
       train + ": outfit 0 (set_id '" + set0 +
           "'): items[0].name is an integer; expected a string"},
      {edit_json(train, [](json& d) { d[0]["set_id"] = -5; }), Split::Train, "",
       train + ": outfit 0: 'set_id' is an integer; expected an id (a string or a non-negative "
               "integer)"},
      {[&] {
         wscsl::testing::write_text(dir_ / "category_types.csv", "categoryid,type\nx,tops\n");
       },
       Split::Train, "", csv + ":2: categoryid is 'x'; expected an integer"},
      {[&] { wscsl::testing::write_text(dir_ / "category_types.csv", "id,type\n1,tops\n"); },
       Split::Train, "", csv + ":1: the header lacks a 'categoryid' or a 'type' column"},
      {edit_json(dir_ / "fill_in_the_blank_test.json", [](json& d) { d[0]["answers"][0] = "9_9"; }),
       Split::Test, "",
       (dir_ / "fill_in_the_blank_test.json").string() +
           ": question 0: answers[0] '9_9' is not "
           "an item of " +
           (dir_ / "test_no_dup.json").string()},
      {[&] {
         std::ofstream(dir_ / "fashion-compatibility-prediction.txt", std::ios::app) << "yes a b\n";
       },
       Split::Test, "",
       (dir_ / "fashion-compatibility-prediction.txt").string() + ":9: the label is 'yes'"},
      {edit_json(dir_ / "same_type" / "fill_in_blank_test.json",
                 [](json& d) {
                   d[0]["answers"] = {d[0]["answers"][0], d[0]["answers"][0], d[0]["answers"][0],
                                      d[0]["answers"][0]};
                 }),
       Split::Test, "same_type_fitb = \"same_type/fill_in_blank_test.json\"",
       (dir_ / "same_type" / "fill_in_blank_test.json").string() + ": question 0: "},
      {[] {}, Split::Train, "held_out_types = [\"hats\"]",
       "held_out_types: 'hats' is not an item type of " + csv},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    fs::remove_all(dir_);
    fixture_ = wscsl::testing::write_maryland_polyvore(dir_);
    cases[i].damage();
    const std::string message = load_error(cases[i].split, cases[i].extra);
    EXPECT_NE(message.find(cases[i].expected), std::string::npos)
        << "case " << i << ": " << message << "\nexpected: " << cases[i].expected;
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 0) << message;
  }
}

// The embedded benchmark's Maryland-style variant (any-type negatives, answers[0] right).
TEST(MarylandPolyvoreGenerated, TheTinyBenchmarksVariantIsRead) {
  wscsl::testing::ScratchDir scratch("maryland_generated");
  data::OutfitBenchmarkOptions options;
  options.preset = data::OutfitPreset::Tiny;
  options.seed = 3;
  data::ensure_outfit_benchmark(scratch.path(), options);
  auto d = wscsl::testing::build<Dataset>(
      "maryland_polyvore",
      fmt::format("root = \"{}\"\ncategory_types = \"category_types.csv\"\nimage_size = 16",
                  (scratch.path() / "maryland").string()));
  EXPECT_EQ(d->info().num_conditions(), 66);
  const OutfitData& test = *d->split(Split::Test).outfits;
  EXPECT_GT(test.blanks.questions.size(), 0);
  EXPECT_EQ(test.blanks.answers.sum().item<std::int64_t>(), 0);
  EXPECT_GT(test.compatibility.outfits.size(), 0);
  EXPECT_GT(d->split(Split::Train).triplets.size(0), 0);
  // Texts: every item's normalised name (the benchmark's title; some have none) and its type.
  std::multiset<std::string> want;
  for (const char* file : {"train_no_dup.json", "valid_no_dup.json", "test_no_dup.json"})
    for (const json& o : json::parse(read_text_file(scratch.path() / "maryland" / file)))
      for (const json& i : o.at("items"))
        want.insert(normalised_text(i.at("name").get<std::string>()));
  const auto& texts = d->split(Split::Test).texts;
  EXPECT_EQ(std::multiset<std::string>(texts.at("title").begin(), texts.at("title").end()), want);
  EXPECT_GT(want.count(""), 0u);
  const std::vector<std::string>& types = d->info().item_types;
  for (const std::string& c : texts.at("category"))
    ASSERT_NE(std::find(types.begin(), types.end(), c), types.end()) << c;
  EXPECT_TRUE(fs::is_regular_file(scratch.path() / "maryland" / data::kTextFeatureFile));
}

// Han's scripts open fashion_compatibility_prediction.txt and fill_in_blank_test.json; the
// README spells them otherwise. Either is read; neither is one message naming both.
TEST(MarylandPolyvoreRelease, TheTestFilesAreReadUnderTheScriptsSpellings) {
  wscsl::testing::ScratchDir scratch("maryland_scripts");
  const fs::path dir = scratch.path();
  const auto fixture =
      wscsl::testing::write_maryland_polyvore(dir, wscsl::testing::MarylandSpelling::Scripts);
  EXPECT_FALSE(fs::exists(dir / "fashion-compatibility-prediction.txt"));
  const std::string body = fmt::format(
      "root = \"{}\"\ncategory_types = \"category_types.csv\"\nimage_size = 8\ndecode_threads = 1",
      dir.string());
  auto d = wscsl::testing::build<Dataset>("maryland_polyvore", body);
  const OutfitData& o = *d->split(Split::Test).outfits;
  EXPECT_EQ(values(o.compatibility.labels), fixture.outfits.splits.at(Split::Test).labels);
  EXPECT_EQ(o.blanks.questions.size(),
            static_cast<std::int64_t>(fixture.outfits.splits.at(Split::Test).questions.size()));

  fs::remove(dir / "fashion_compatibility_prediction.txt");
  fs::remove(dir / "fill_in_blank_test.json");
  const std::string message = wscsl::testing::load_error("maryland_polyvore", body, Split::Train);
  EXPECT_EQ(message,
            fmt::format("2 problems in the dataset's files:\n"
                        "  Maryland Polyvore compatibility lines: neither {0}/"
                        "fashion-compatibility-prediction.txt nor {0}/"
                        "fashion_compatibility_prediction.txt is there; expected one of them (the "
                        "README's spelling or the one Han's scripts open)\n"
                        "  Maryland Polyvore fill-in-the-blank questions: neither {0}/"
                        "fill_in_the_blank_test.json nor {0}/fill_in_blank_test.json is there; "
                        "expected one of them (the README's spelling or the one Han's scripts "
                        "open)",
                        dir.string()));
}

// Vasileva's same-type questions give the blank item's `index`, which skips: read as published.
TEST_F(MarylandPolyvoreTest, IndexValuedBlankPositionsAreReadAsPublished) {
  bool past_the_question = false;
  for (const auto& q : fixture_.same_type.questions)
    past_the_question |= q.blank_position > static_cast<std::int64_t>(q.question.size()) + 1;
  ASSERT_TRUE(past_the_question) << "the fixture has no index past the question's positions";
  auto d = build(
      "same_type_compatibility = \"same_type/compatibility_test.txt\"\n"
      "same_type_fitb = \"same_type/fill_in_blank_test.json\"");
  expect_tasks(*d->split(Split::Test).outfits, fixture_.same_type);
}

// `wscsl check` builds the dataset: a broken test-split file is refused then, with every other
// problem of the files, before anything trains.
TEST_F(MarylandPolyvoreTest, EveryBrokenFileOfEverySplitIsRefusedWhenTheDatasetIsBuilt) {
  std::ofstream(dir_ / "fashion-compatibility-prediction.txt", std::ios::app) << "2 a b\n";
  json questions = json::parse(read_text_file(dir_ / "fill_in_the_blank_test.json"));
  questions[1]["answers"][2] = "1_1";
  wscsl::testing::write_text(dir_ / "fill_in_the_blank_test.json", questions.dump());
  std::string message;
  try {
    build();
  } catch (const DataError& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("2 problems in the dataset's files:\n  ", 0), 0u) << message;
  EXPECT_NE(message.find((dir_ / "fashion-compatibility-prediction.txt").string() +
                         ":9: the label is '2'; expected 1 (compatible) or 0 (not)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find((dir_ / "fill_in_the_blank_test.json").string() +
                         ": question 1: answers[2] '1_1' is not an item of " +
                         (dir_ / "test_no_dup.json").string()),
            std::string::npos)
      << message;
}

// The categoryid → type table is bounded in rows and in types, before any matrix is allocated.
TEST(MarylandPolyvoreRelease, TheCategoryTableIsBoundedUnderAMemoryLimit) {
  if (!wscsl::testing::memory_limit_available()) GTEST_SKIP() << "under a sanitizer";
  wscsl::testing::ScratchDir scratch("maryland_categories");
  const fs::path file = scratch.path() / "category_types.csv";
  std::string types = "categoryid,type\n", rows = "categoryid,type\n";
  for (int c = 0; c < 50000; ++c)
    types += fmt::format("{},type {}\n", c, c);
  for (std::size_t c = 0; c <= maryland_polyvore::kMaxCategoryRows; ++c)
    rows += fmt::format("{},tops\n", c);
  using wscsl::testing::LimitedRun;
  const std::size_t limit = std::size_t{100} << 20;
  wscsl::testing::write_text(file, types);
  LimitedRun run = wscsl::testing::run_with_memory_limit(
      [&] { maryland_polyvore::read_category_types(file); }, limit);
  ASSERT_EQ(run.outcome, LimitedRun::Outcome::Refused) << run.message;
  EXPECT_EQ(run.message, file.string() +
                             ":1026: type 'type 1024' is the 1025th; expected at most 1024 item "
                             "types");
  wscsl::testing::write_text(file, rows);
  run = wscsl::testing::run_with_memory_limit([&] { maryland_polyvore::read_category_types(file); },
                                              limit);
  ASSERT_EQ(run.outcome, LimitedRun::Outcome::Refused) << run.message;
  EXPECT_EQ(run.message, file.string() +
                             ":65538: the table has 65537 rows, more than the 65536 it "
                             "may have; expected one per categoryid");
}
