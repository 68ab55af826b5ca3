#include <gtest/gtest.h>
#include <sys/stat.h>
#include <algorithm>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "../src/polyvore_outfits.hpp"
#include "wscsl/data/item_text.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/data/type_pairs_pickle.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/outfit_fixtures.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;
using namespace wscsl;
using nlohmann::json;
using wscsl::testing::OutfitFixture;

namespace {

std::vector<std::int64_t> column(const at::Tensor& t, std::int64_t c) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < t.size(0); ++i)
    out.push_back(t[i][c].item<std::int64_t>());
  return out;
}

std::vector<std::int64_t> values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return {c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()};
}

std::string pickle_error(const std::string& bytes) {
  try {
    parse_type_pairs_pickle(bytes, "dir/typespaces.p");
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

class PolyvoreOutfitsTest : public ::testing::Test {
 protected:
  void SetUp() override { fixture_ = wscsl::testing::write_polyvore_outfits(dir_); }

  std::string body(const std::string& extra = "") const {
    return fmt::format("root = \"{}\"\nimage_size = 8\ndecode_threads = 1\n{}", dir_.string(),
                       extra);
  }
  std::shared_ptr<Dataset> build(const std::string& extra = "") {
    return wscsl::testing::build<Dataset>("polyvore_outfits", body(extra));
  }
  std::string load_error(Split split = Split::Train, const std::string& extra = "") {
    return wscsl::testing::load_error("polyvore_outfits", body(extra), split);
  }
  fs::path file(const std::string& name) const { return dir_ / "nondisjoint" / name; }
  json read_json(const fs::path& path) const { return json::parse(read_text_file(path)); }
  void write_json(const fs::path& path, const json& doc) const {
    wscsl::testing::write_text(path, doc.dump());
  }
  std::int64_t image(const std::string& item) const {
    return wscsl::testing::fixture_image(fixture_, item);
  }
  std::int64_t type_index(const std::string& type) const {
    const std::vector<std::string> sorted = {"bottoms", "scarves", "shoes", "tops"};
    return std::find(sorted.begin(), sorted.end(), type) - sorted.begin();
  }
  std::int64_t condition_of(const std::string& a, const std::string& b) const {
    const auto& pairs = wscsl::testing::outfit_fixture_type_pairs();
    for (std::size_t k = 0; k < pairs.size(); ++k)
      if ((pairs[k].first == a && pairs[k].second == b) ||
          (pairs[k].first == b && pairs[k].second == a))
        return static_cast<std::int64_t>(k);
    return -1;
  }

  wscsl::testing::ScratchDir scratch_{"polyvore_outfits"};
  const fs::path dir_ = scratch_.path();
  OutfitFixture fixture_;
};

}  // namespace

TEST(TypePairsPickle, EveryProtocolGivesTheSamePairs) {
  for (int protocol : {0, 2, 4})
    EXPECT_EQ(parse_type_pairs_pickle(wscsl::testing::type_pairs_pickle(protocol), "t.p"),
              wscsl::testing::outfit_fixture_type_pairs())
        << "protocol " << protocol;
  // Python 3's protocol 0 pickles str with the UNICODE opcode (raw-unicode-escape).
  const std::string v = "(lp0\n(Vtops\np1\nV\\u00e9t\\u00e9\np2\ntp3\na(g1\ng1\ntp4\na.";
  const std::vector<TypePair> want = {{"tops", "\xc3\xa9t\xc3\xa9"}, {"tops", "tops"}};
  EXPECT_EQ(parse_type_pairs_pickle(v, "t.p"), want);
  // Protocol 1 (EMPTY_LIST, BINPUT, TUPLE, SHORT_BINSTRING, APPENDS) as Python 2 wrote it.
  static const char p1_bytes[] =
      "]q\x00((U\x04topsq\x01U\x05shoesq\x02tq\x03"
      "e.";
  const std::string p1(p1_bytes, sizeof p1_bytes - 1);
  EXPECT_EQ(parse_type_pairs_pickle(p1, "t.p"), (std::vector<TypePair>{{"tops", "shoes"}}));
}

TEST(TypePairsPickle, EveryMalformedPickleIsOneSentenceWithFileAndByte) {
  const std::string good = wscsl::testing::type_pairs_pickle(2);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good.substr(0, 40), "dir/typespaces.p: byte "},
      {good + "x", "follow the STOP opcode"},
      {"\x80\x05]q\x00.", "byte 0: protocol 5; expected 0 to 4"},
      {"(lp0\nc__builtin__\neval\np1\na.", "byte 5: opcode 0x63 is not one"},
      {"(lp0\n(S'a'\np1\nS'b'\np2\nS'c'\np3\ntp4\na.", "entry 0 of the list is a tuple of 3"},
      {"(lp0\n(S'a'\np1\ng7\ntp4\na.", "memo entry 7 is read before it is written"},
      {"(lp0\n.", "the list is empty"},
      {"(S'a'\np1\nS'b'\np2\nt.", "does not leave exactly one list"},
      {"(lp0\nS'a'\na.", "APPEND gets a string as a list element; expected a tuple"},
      {"(lp0\n(S'a\np1\nS'b'\ntp2\na.", "the STRING argument is not quoted"},
      {"(lp0\n(S'a'\np1\nS''\np2\ntp3\na.", "entry 0 of the list has an empty type name"},
      {std::string("\x80\x02]q\x00(X\xff\xff\xff\x7f", 11), "runs past the end of the file"},
      {"", "byte 0: the file ends where an opcode was expected"},
  };
  for (const auto& [bytes, expected] : cases) {
    const std::string message = pickle_error(bytes);
    EXPECT_NE(message.find(expected), std::string::npos) << message << "\nexpected: " << expected;
    EXPECT_EQ(message.rfind("dir/typespaces.p: ", 0), 0u) << message;
  }
}

TEST_F(PolyvoreOutfitsTest, InfoNamesTheTypePairsInPickleOrderAndTheSortedTypes) {
  auto d = build();
  const DatasetInfo info = d->info();
  ASSERT_EQ(info.num_conditions(), 10);
  EXPECT_EQ(info.conditions[0].name, "tops+bottoms");
  EXPECT_EQ(info.conditions[9].name, "scarves+scarves");
  EXPECT_TRUE(info.conditions[3].values.empty());
  EXPECT_EQ(info.item_types, (std::vector<std::string>{"bottoms", "scarves", "shoes", "tops"}));
  EXPECT_EQ(info.height, 8);
  const at::Tensor m = d->split(Split::Val).outfits->type_pair_conditions;
  for (const std::string& a : info.item_types)
    for (const std::string& b : info.item_types)
      EXPECT_EQ(m[type_index(a)][type_index(b)].item<std::int64_t>(), condition_of(a, b));
}

TEST_F(PolyvoreOutfitsTest, TrainingTripletsAreTheReleasedLoadersPairs) {
  auto d = build();
  const SplitData& s = d->split(Split::Train);
  const auto pairs = wscsl::testing::naive_outfit_pairs(fixture_, Split::Train);
  ASSERT_EQ(s.triplets.size(0), static_cast<std::int64_t>(pairs.size()));
  std::int64_t expected_pairs = 0;
  for (const auto& outfit : fixture_.splits.at(Split::Train).outfits)
    expected_pairs += static_cast<std::int64_t>(outfit.size() * (outfit.size() - 1) / 2);
  EXPECT_EQ(static_cast<std::int64_t>(pairs.size()), expected_pairs);  // every type has 2 items
  const std::vector<std::int64_t> types = values(s.outfits->item_types);
  std::set<std::int64_t> train_items;
  for (const auto& outfit : fixture_.splits.at(Split::Train).outfits)
    for (const std::string& item : outfit)
      train_items.insert(image(item));
  bool same_type_pair = false;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto t = static_cast<std::int64_t>(i);
    EXPECT_EQ(s.triplets[t][0].item<std::int64_t>(), pairs[i].anchor);
    EXPECT_EQ(s.triplets[t][1].item<std::int64_t>(), pairs[i].close);
    const std::int64_t far = s.triplets[t][2].item<std::int64_t>();
    EXPECT_NE(far, pairs[i].close);
    EXPECT_EQ(types[static_cast<std::size_t>(far)], type_index(pairs[i].close_type));
    EXPECT_TRUE(train_items.count(far));
    EXPECT_EQ(s.conditions[t].item<std::int64_t>(),
              condition_of(pairs[i].anchor_type, pairs[i].close_type));
    same_type_pair |= pairs[i].anchor_type == pairs[i].close_type;
  }
  EXPECT_TRUE(same_type_pair);
  for (const auto& [item, type] : fixture_.item_type) {
    if (std::find(fixture_.image_order.begin(), fixture_.image_order.end(), item) !=
        fixture_.image_order.end()) {
      EXPECT_EQ(types[static_cast<std::size_t>(image(item))], type_index(type));
    }
  }
}

TEST_F(PolyvoreOutfitsTest, EpochTripletsAreAFunctionOfSeedAndEpoch) {
  auto a = build();
  auto b = build();
  const at::Tensor a0 = a->epoch_triplets(Split::Train, 0, 5);
  EXPECT_TRUE(a0.equal(b->epoch_triplets(Split::Train, 0, 5)));
  const at::Tensor a1 = a->epoch_triplets(Split::Train, 1, 5);
  EXPECT_FALSE(a0.equal(a1));
  EXPECT_FALSE(a0.equal(a->epoch_triplets(Split::Train, 0, 6)));
  EXPECT_TRUE(a0.slice(1, 0, 2).equal(a1.slice(1, 0, 2)));
  EXPECT_TRUE(a0.slice(1, 0, 2).equal(a->split(Split::Train).triplets.slice(1, 0, 2)));
  // The far items of an epoch are of the close item's type, never the close item.
  const std::vector<std::int64_t> types = values(a->split(Split::Train).outfits->item_types);
  const std::vector<std::int64_t> close = column(a1, 1), far = column(a1, 2);
  for (std::size_t i = 0; i < close.size(); ++i) {
    EXPECT_NE(close[i], far[i]);
    EXPECT_EQ(types[static_cast<std::size_t>(close[i])], types[static_cast<std::size_t>(far[i])]);
  }
  // Validation keeps its load-time triplets, the same in every instance.
  EXPECT_TRUE(a->split(Split::Val).triplets.equal(b->split(Split::Val).triplets));
}

TEST_F(PolyvoreOutfitsTest, CompatibilityLinesAndQuestionsResolveByItemKey) {
  auto d = build();
  for (Split split : kAllSplits) {
    const OutfitData& o = *d->split(split).outfits;
    const wscsl::testing::FixtureSplit& f = fixture_.splits.at(split);
    ASSERT_EQ(o.compatibility.outfits.size(), static_cast<std::int64_t>(f.lines.size()))
        << split_name(split);
    EXPECT_EQ(values(o.compatibility.labels), f.labels);
    const std::vector<std::int64_t> offsets = values(o.compatibility.outfits.offsets);
    const std::vector<std::int64_t> items = values(o.compatibility.outfits.items);
    for (std::size_t l = 0; l < f.lines.size(); ++l) {
      std::vector<std::int64_t> want;
      for (const std::string& key : f.lines[l])
        want.push_back(image(f.item_of.at(key)));
      EXPECT_EQ(
          std::vector<std::int64_t>(items.begin() + offsets[l], items.begin() + offsets[l + 1]),
          want);
    }
    ASSERT_EQ(o.blanks.questions.size(), static_cast<std::int64_t>(f.questions.size()));
    ASSERT_FALSE(f.questions.empty());
    ASSERT_EQ(o.blanks.candidates.size(1), 4);
    std::set<std::int64_t> answer_columns;
    for (std::size_t q = 0; q < f.questions.size(); ++q) {
      const auto qi = static_cast<std::int64_t>(q);
      EXPECT_EQ(o.blanks.answers[qi].item<std::int64_t>(), f.questions[q].answer);
      EXPECT_EQ(o.blanks.blank_positions[qi].item<std::int64_t>(), f.questions[q].blank_position);
      for (std::int64_t a = 0; a < 4; ++a)
        EXPECT_EQ(o.blanks.candidates[qi][a].item<std::int64_t>(),
                  image(f.item_of.at(f.questions[q].answers[static_cast<std::size_t>(a)])));
      answer_columns.insert(f.questions[q].answer);
    }
    EXPECT_GT(answer_columns.size(), 1u);  // the right answer is not always in one column
  }
}

TEST_F(PolyvoreOutfitsTest, HeldOutTypesLeaveTheTrainingOutfitsOnly) {
  auto d = build("held_out_types = [\"scarves\", \"shoes\"]");
  const SplitData& train = d->split(Split::Train);
  const auto pairs =
      wscsl::testing::naive_outfit_pairs(fixture_, Split::Train, {"scarves", "shoes"});
  ASSERT_EQ(train.triplets.size(0), static_cast<std::int64_t>(pairs.size()));
  ASSERT_LT(pairs.size(), wscsl::testing::naive_outfit_pairs(fixture_, Split::Train).size());
  const std::vector<std::int64_t> types = values(train.outfits->item_types);
  for (std::int64_t id : values(train.triplets))
    EXPECT_TRUE(types[static_cast<std::size_t>(id)] != type_index("scarves") &&
                types[static_cast<std::size_t>(id)] != type_index("shoes"));
  for (std::size_t i = 0; i < pairs.size(); ++i)
    EXPECT_EQ(train.triplets[static_cast<std::int64_t>(i)][1].item<std::int64_t>(), pairs[i].close);
  const SplitData& test = d->split(Split::Test);
  EXPECT_EQ(
      test.triplets.size(0),
      static_cast<std::int64_t>(wscsl::testing::naive_outfit_pairs(fixture_, Split::Test).size()));
  bool scarves_in_test = false;
  for (std::int64_t id : values(test.triplets))
    scarves_in_test |= types[static_cast<std::size_t>(id)] == type_index("scarves");
  EXPECT_TRUE(scarves_in_test);
  EXPECT_NE(load_error(Split::Train, "held_out_types = [\"scarfs\"]")
                .find("held_out_types: 'scarfs' is not an item type of " +
                      file("typespaces.p").string() + "; expected one of bottoms, scarves"),
            std::string::npos);
}

TEST_F(PolyvoreOutfitsTest, ImagesAreTheItemsFilesThroughTheReferencePipeline) {
  auto d = build("normalize = \"none\"");
  const std::string item = fixture_.splits.at(Split::Test).outfits[2][1];
  const at::Tensor got = d->images(Split::Test, torch::tensor({image(item)}, torch::kLong), {});
  const DecodedImage file = read_image_file(dir_ / "images" / (item + ".jpg"), 1 << 20);
  ASSERT_TRUE(file.problem.empty()) << file.problem;
  std::vector<std::uint8_t> want(3 * 8 * 8);
  resize_and_center_crop(file.image, 8, want.data());
  const at::Tensor expected =
      torch::from_blob(want.data(), {1, 3, 8, 8}, torch::kUInt8).to(torch::kFloat).div(255);
  EXPECT_TRUE(got.equal(expected));
}

TEST_F(PolyvoreOutfitsTest, TheDisjointSplitIsReadFromItsFolder) {
  fs::rename(dir_ / "nondisjoint", dir_ / "disjoint");
  EXPECT_NE(load_error().find("nondisjoint"), std::string::npos);
  auto d = wscsl::testing::build<Dataset>("polyvore_outfits", body("split = \"disjoint\""));
  EXPECT_EQ(
      d->split(Split::Test).triplets.size(0),
      static_cast<std::int64_t>(wscsl::testing::naive_outfit_pairs(fixture_, Split::Test).size()));
}

TEST_F(PolyvoreOutfitsTest, PythonPicklesOfEveryProtocolAreRead) {
  for (int protocol : {0, 4}) {
    wscsl::testing::write_text(file("typespaces.p"), wscsl::testing::type_pairs_pickle(protocol));
    EXPECT_EQ(build()->info().conditions[2].name, "tops+shoes");
  }
}

TEST_F(PolyvoreOutfitsTest, TextsAreTheReleasedKeysAndTheSemanticCategories) {
  const std::string edited = fixture_.splits.at(Split::Train).outfits[0][0];
  json metadata = read_json(dir_ / "polyvore_item_metadata.json");
  metadata[edited]["title"] = " Ma\u00f1ana\nRed TOP, Size S \n";
  write_json(dir_ / "polyvore_item_metadata.json", metadata);
  auto d = build();
  EXPECT_EQ(d->info().text_fields, (std::vector<std::string>{"title", "category"}));
  EXPECT_TRUE(d->contract().provides_resource(Resource::ItemText, "title"));
  EXPECT_TRUE(d->contract().provides_resource(Resource::ItemText, "category"));
  for (Split split : kAllSplits) {
    const SplitData& s = d->split(split);
    ASSERT_EQ(s.texts.size(), 2u);
    const std::vector<std::string>& titles = s.texts.at("title");
    const std::vector<std::string>& categories = s.texts.at("category");
    ASSERT_EQ(static_cast<std::int64_t>(titles.size()), s.num_images);
    ASSERT_EQ(static_cast<std::int64_t>(categories.size()), s.num_images);
    int fallbacks = 0;
    for (const std::string& item : fixture_.image_order) {
      const auto id = static_cast<std::size_t>(image(item));
      // The fixture's titles are "Title <p>", empty for every fifth item, whose url_name is
      // "item <p>".
      const int p = std::stoi(item) - 5000;
      const std::string want = item == edited ? "maanared top, size s"
                               : p % 5 == 0   ? fmt::format("item {}", p)
                                              : fmt::format("title {}", p);
      EXPECT_EQ(titles[id], want) << item;
      fallbacks += p % 5 == 0;
      EXPECT_EQ(categories[id], fixture_.item_type.at(item)) << item;
    }
    EXPECT_GT(fallbacks, 0);
  }
}

TEST_F(PolyvoreOutfitsTest, CategoriesCsvGivesTheFineGrainedCategoryLabel) {
  // The fixture's category_ids are 10 to 16.
  std::string csv;
  for (int c = 10; c <= 16; ++c)
    csv += fmt::format("{},\"Fine Name, {}\",{}\n", c, c, c % 2 ? "tops" : "shoes");
  wscsl::testing::write_text(dir_ / "categories.csv", csv);
  const json metadata = read_json(dir_ / "polyvore_item_metadata.json");
  auto d = build();
  const std::vector<std::string>& categories = d->split(Split::Test).texts.at("category");
  for (const std::string& item : fixture_.image_order)
    EXPECT_EQ(categories[static_cast<std::size_t>(image(item))],
              "fine name, " + metadata.at(item).at("category_id").get<std::string>())
        << item;

  const std::string file = (dir_ / "categories.csv").string();
  const std::string without_13 = csv.substr(0, csv.find("13,")) + csv.substr(csv.find("14,"));
  // Every item of the missing category is named, one problem a line.
  std::int64_t of_13 = 0;
  for (const std::string& item : fixture_.image_order)
    of_13 += metadata.at(item).at("category_id") == "13" ? 1 : 0;
  ASSERT_GT(of_13, 1);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {without_13, fmt::format("{} problems in the dataset's files:\n  ", of_13)},
      {without_13, (dir_ / "polyvore_item_metadata.json").string() + ": item '"},
      {without_13, "': 'category_id' is '13', which " + file +
                       " does not list; expected a row \"<category_id>,<fine-grained category>,"},
      {"10,Fine Name 10\n", file + ":1: expected 3 fields"},
      {csv + "12,Again,tops\n", file + ":8: category_id '12' is listed again"},
  };
  for (const auto& [content, expected] : cases) {
    wscsl::testing::write_text(dir_ / "categories.csv", content);
    const std::string message = load_error();
    EXPECT_NE(message.find(expected), std::string::npos) << message << "\nexpected: " << expected;
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), content == without_13 ? of_13 : 0)
        << message;
  }
}

// Every malformed file: one sentence naming the file, the record and the field.
TEST_F(PolyvoreOutfitsTest, EveryMalformedFileIsOneSentenceNamingFileRecordAndField) {
  const std::string train = file("train.json").string();
  const std::string metadata = (dir_ / "polyvore_item_metadata.json").string();
  const std::string set0 = fixture_.splits.at(Split::Train).set_ids[0];
  const std::string set2 = fixture_.splits.at(Split::Train).set_ids[2];
  const std::string first = fixture_.splits.at(Split::Train).outfits[0][0];
  struct Case {
    std::function<void()> damage;
    Split split;
    std::string expected;
  };
  const auto edit_json = [&](const fs::path& path, const std::function<void(json&)>& edit) {
    return [this, path, edit] {
      json doc = read_json(path);
      edit(doc);
      write_json(path, doc);
    };
  };
  const std::vector<Case> cases = {
      {edit_json(file("train.json"), [](json& d) { d[2].erase("set_id"); }), Split::Train,
       train + ": outfit 2: has no 'set_id'; expected an id (a string or an integer)"},
      {edit_json(file("train.json"), [](json& d) { d[2]["items"][1]["item_id"] = 1.5; }),
       Split::Train,
       train + ": outfit 2 (set_id '" + set2 +
           "'): items[1].item_id is a fractional number; expected an id (a string or a "
           "non-negative integer)"},
      {edit_json(file("train.json"),
                 [](json& d) { d[2]["items"][1]["item_id"] = std::string("17\0x", 4); }),
       Split::Train,
       train + ": outfit 2 (set_id '" + set2 +
           "'): items[1].item_id '17\\x00x' holds a NUL byte; expected an id"},
      {edit_json(file("train.json"),
                 [](json& d) { d[2]["items"][1]["index"] = 18446744073709551615u; }),
       Split::Train,
       train + ": outfit 2 (set_id '" + set2 +
           "'): items[1].index is 18446744073709551615, above 9223372036854775807; expected an "
           "integer within 64 bits"},
      {edit_json(file("train.json"),
                 [](json& d) {
                   d[2]["set_id"] = std::string(300, 'x').insert(0, "\x1b[2J");
                   d[2]["items"][0].erase("item_id");
                 }),
       Split::Train,
       train + ": outfit 2 (set_id '\\x1b[2J" + std::string(196, 'x') +
           "\u2026' (104 more bytes)): has no items[0].item_id"},
      {edit_json(file("train.json"), [](json& d) { d[0]["items"][0].erase("index"); }),
       Split::Train,
       train + ": outfit 0 (set_id '" + set0 + "'): has no items[0].index; expected an integer"},
      {edit_json(file("train.json"), [](json& d) { d[0]["items"][1]["index"] = "2"; }),
       Split::Train,
       train + ": outfit 0 (set_id '" + set0 +
           "'): items[1].index is a string; expected an integer"},
      {edit_json(file("train.json"), [](json& d) { d[0]["items"] = 3; }), Split::Train,
       train + ": outfit 0 (set_id '" + set0 + "'): 'items' is an integer; expected a list"},
      {edit_json(file("train.json"), [](json& d) { d[0]["items"][0]["item_id"] = "999"; }),
       Split::Train,
       metadata + ": describes no item '999', which " + train + " (outfit 0, set_id '" + set0 +
           "') lists"},
      {[&] { wscsl::testing::write_text(file("train.json"), "[{\"set_id\": \"1\",]"); },
       Split::Train, train + ": not valid JSON: parse error at line 1, column 17"},
      {edit_json(dir_ / "polyvore_item_metadata.json",
                 [&](json& d) { d[first].erase("semantic_category"); }),
       Split::Train,
       metadata + ": item '" + first + "': has no 'semantic_category'; expected a string"},
      {edit_json(dir_ / "polyvore_item_metadata.json", [&](json& d) { d[first]["title"] = 5; }),
       Split::Train, metadata + ": item '" + first + "': 'title' is an integer; expected a string"},
      {edit_json(dir_ / "polyvore_item_metadata.json",
                 [&](json& d) { d[first]["semantic_category"] = "hats"; }),
       Split::Train,
       metadata + ": item '" + first + "': 'semantic_category' is 'hats', which " +
           file("typespaces.p").string() + " does not name"},
      {[&] { std::ofstream(file("compatibility_valid.txt"), std::ios::app) << "2 a_1 b_2\n"; },
       Split::Val, file("compatibility_valid.txt").string() + ":9: the label is '2'; expected 1"},
      {[&] {
         std::ofstream(file("compatibility_test.txt"), std::ios::app) << "1 " + set0 + "_1\n";
       },
       Split::Test,
       file("compatibility_test.txt").string() + ":9: the outfit has 1 item; expected at least 2"},
      {[&] {
         std::ofstream(file("compatibility_test.txt"), std::ios::app) << "0 " + set0 + "_1 x_2\n";
       },
       Split::Test,
       file("compatibility_test.txt").string() + ":9: item '" + set0 + "_1' is not an item of " +
           file("test.json").string()},
      {edit_json(
           file("fill_in_blank_valid.json"),
           [&](json& d) {
             d[0]["answers"]
              [static_cast<std::size_t>(fixture_.splits.at(Split::Val).questions[0].answer)] =
                  d[0]["answers"][(fixture_.splits.at(Split::Val).questions[0].answer + 1) % 4];
           }),
       Split::Val,
       file("fill_in_blank_valid.json").string() +
           ": question 0: 0 of the answers share the set_id of question[0]"},
      {edit_json(file("fill_in_blank_valid.json"), [](json& d) { d[0]["answers"][1] = "1_1"; }),
       Split::Val,
       file("fill_in_blank_valid.json").string() +
           ": question 0: answers[1] '1_1' is not "
           "an item of " +
           file("valid.json").string()},
      {edit_json(file("fill_in_blank_test.json"), [](json& d) { d[1]["blank_position"] = "9"; }),
       Split::Test,
       file("fill_in_blank_test.json").string() + ": question 1: 'blank_position' is a string; "
                                                  "expected an integer"},
      {edit_json(file("fill_in_blank_test.json"), [](json& d) { d[1].erase("answers"); }),
       Split::Test,
       file("fill_in_blank_test.json").string() +
           ": question 1: has no 'answers'; expected a list"},
      {edit_json(file("fill_in_blank_test.json"), [](json& d) { d[1]["question"][0] = 4; }),
       Split::Test,
       file("fill_in_blank_test.json").string() + ": question 1: question[0] is an integer; "
                                                  "expected an item name"},
      {[&] { wscsl::testing::write_text(file("typespaces.p"), "(lp0\nc__builtin__\neval\n."); },
       Split::Train, file("typespaces.p").string() + ": byte 5: opcode 0x63 is not one"},
      {[&] { fs::remove(file("fill_in_blank_test.json")); }, Split::Test,
       "Polyvore Outfits fill-in-the-blank questions " + file("fill_in_blank_test.json").string() +
           ": no such file"},
      {[&] {
         fs::remove(dir_ / "images" / (fixture_.splits.at(Split::Val).outfits[1][0] + ".jpg"));
       },
       Split::Val, fixture_.splits.at(Split::Val).outfits[1][0] + ".jpg"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    fs::remove_all(dir_);
    fixture_ = wscsl::testing::write_polyvore_outfits(dir_);
    cases[i].damage();
    const std::string message = load_error(cases[i].split);
    EXPECT_NE(message.find(cases[i].expected), std::string::npos)
        << "case " << i << ": " << message << "\nexpected: " << cases[i].expected;
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 0) << message;
  }
}

// The embedded benchmark is written in this layout and read back, both splits.
TEST(PolyvoreOutfitsGenerated, TheTinyBenchmarkIsWrittenAndRead) {
  wscsl::testing::ScratchDir scratch("polyvore_generated");
  const std::string root = (scratch.path() / "bench").string();
  for (const char* split : {"nondisjoint", "disjoint"}) {
    auto d = wscsl::testing::build<Dataset>(
        "polyvore_outfits",
        fmt::format("root = \"{}\"\ngenerate = \"tiny\"\ngenerator_seed = 3\nsplit = \"{}\"\n"
                    "image_size = 16\nheld_out_types = [\"scarves\", \"accessories\"]",
                    root, split));
    EXPECT_EQ(d->info().num_conditions(), 66);
    EXPECT_EQ(d->info().item_types.size(), 11u);
    const SplitData& train = d->split(Split::Train);
    EXPECT_GT(train.triplets.size(0), 0);
    const SplitData& test = d->split(Split::Test);
    EXPECT_GT(test.outfits->compatibility.outfits.size(), 0);
    EXPECT_GT(test.outfits->blanks.questions.size(), 0);
    const at::Tensor epoch = d->epoch_triplets(Split::Train, 2, 9);
    EXPECT_TRUE(epoch.slice(1, 0, 2).equal(train.triplets.slice(1, 0, 2)));

    // Every listed item's texts: its key, or none; its fine category's name from categories.csv.
    const json metadata =
        json::parse(read_text_file(fs::path(root) / "polyvore_item_metadata.json"));
    std::map<std::string, std::string> fine;
    for (const std::string& line : read_lines(fs::path(root) / "categories.csv"))
      fine[line.substr(0, line.find(','))] =
          line.substr(line.find(',') + 1, line.rfind(',') - line.find(',') - 1);
    std::set<std::string> listed;
    for (const char* file : {"train.json", "valid.json", "test.json"})
      for (const json& o : json::parse(read_text_file(fs::path(root) / split / file)))
        for (const json& i : o.at("items"))
          listed.insert(i.at("item_id").get<std::string>());
    std::multiset<std::string> want_titles, want_categories;
    int fallbacks = 0;
    for (const std::string& id : listed) {
      const json& m = metadata.at(id);
      const std::string title = m.at("title").get<std::string>();
      want_titles.insert(polyvore_text_key(title, m.at("url_name").get<std::string>()));
      fallbacks += title.empty() && !m.at("url_name").get<std::string>().empty();
      want_categories.insert(normalised_text(fine.at(m.at("category_id").get<std::string>())));
    }
    const auto& texts = train.texts;
    EXPECT_EQ(std::multiset<std::string>(texts.at("title").begin(), texts.at("title").end()),
              want_titles);
    EXPECT_EQ(std::multiset<std::string>(texts.at("category").begin(), texts.at("category").end()),
              want_categories);
    EXPECT_GT(fallbacks, 0);
    EXPECT_GT(want_titles.count(""), 0u);
    EXPECT_TRUE(fs::is_regular_file(fs::path(root) / split / "train_hglmm_pca6000.txt"));
  }
}

// Ids written as JSON numbers by another tool read as their decimal text.
TEST_F(PolyvoreOutfitsTest, IdsMayBeJsonNumbers) {
  const auto before = build()->split(Split::Train).triplets.clone();
  for (const char* name : {"train.json", "valid.json", "test.json"}) {
    json doc = read_json(file(name));
    for (json& outfit : doc) {
      outfit["set_id"] = std::stoull(outfit["set_id"].get<std::string>());
      for (json& item : outfit["items"])
        item["item_id"] = std::stoull(item["item_id"].get<std::string>());
    }
    write_json(file(name), doc);
  }
  EXPECT_TRUE(build()->split(Split::Train).triplets.equal(before));
}

// A FIFO, a device or a directory in place of a data file, optional or not, is named for what it
// is when the dataset is built (`wscsl check`), never skipped or called missing.
TEST_F(PolyvoreOutfitsTest, SpecialFilesAreNamedWhetherOptionalOrNot) {
  const auto build_error = [&] {
    try {
      build();
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const fs::path categories = dir_ / "categories.csv";
  ASSERT_EQ(::mkfifo(categories.c_str(), 0600), 0);
  EXPECT_EQ(build_error(), categories.string() + ": is a FIFO; expected a regular file");
  fs::remove(categories);

  fs::remove(file("compatibility_train.txt"));
  fs::create_symlink("/dev/zero", file("compatibility_train.txt"));
  EXPECT_EQ(build_error(), file("compatibility_train.txt").string() +
                               ": is a character device (a link to /dev/zero); expected a "
                               "regular file");
  fs::remove(file("compatibility_train.txt"));

  fs::remove(file("fill_in_blank_test.json"));
  fs::create_directory(file("fill_in_blank_test.json"));
  EXPECT_EQ(build_error(), "Polyvore Outfits fill-in-the-blank questions " +
                               file("fill_in_blank_test.json").string() +
                               ": is a directory; expected a regular file");
  fs::remove(file("fill_in_blank_test.json"));
  fs::remove(file("test.json"));
  EXPECT_EQ(build_error(), "2 problems in the dataset's files:\n  Polyvore Outfits outfits " +
                               file("test.json").string() + ": no such file\n  Polyvore Outfits " +
                               "fill-in-the-blank questions " +
                               file("fill_in_blank_test.json").string() + ": no such file");
}

// A training split with nothing to draw triplets from names its file, not the batch size.
TEST_F(PolyvoreOutfitsTest, AnEmptyTrainingSplitNamesItsFile) {
  wscsl::testing::write_text(file("train.json"), "[]");
  EXPECT_EQ(load_error(),
            file("train.json").string() + ": the file lists no outfit; expected at least one");
  fs::remove_all(dir_);
  fixture_ = wscsl::testing::write_polyvore_outfits(dir_);
  EXPECT_EQ(
      load_error(Split::Train, "held_out_types = [\"tops\", \"bottoms\", \"shoes\", \"scarves\"]"),
      file("train.json").string() +
          ": no outfit has two items outside held_out_types; expected at least one to draw "
          "training triplets from");
}
