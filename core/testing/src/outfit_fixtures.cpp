#include "wscsl/testing/outfit_fixtures.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "wscsl/data/image_file.hpp"
#include "wscsl/data/outfit_files.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;

namespace wscsl::testing {
namespace {

constexpr int kPool = 40;
const char* const kTypes[] = {"tops", "bottoms", "shoes", "scarves"};
const char* const kFileSplits[] = {"train", "valid", "test"};
const Split kSplits[] = {Split::Train, Split::Val, Split::Test};

std::string type_of_pool(int p) {
  return kTypes[p % 4];
}

// 1-based indices that skip 3, as the releases' indices skip removed items.
std::int64_t index_of(std::size_t j) {
  return static_cast<std::int64_t>(j) + 1 + (j >= 2 ? 1 : 0);
}

// The outfits of every split as pool items: sizes 2 to 5; training outfit 1 holds two tops.
std::vector<std::vector<std::vector<int>>> plan_outfits() {
  Rng rng(7);
  std::vector<std::vector<std::vector<int>>> plan(3);
  const int counts[] = {8, 4, 4};
  for (int s = 0; s < 3; ++s)
    for (int o = 0; o < counts[s]; ++o) {
      const int size = 2 + o % 4;
      std::vector<int> items;
      if (s == 0 && o == 1) items = {0, 4};
      while (static_cast<int>(items.size()) < size) {
        const int p = static_cast<int>(rng.below(kPool));
        if (std::find(items.begin(), items.end(), p) == items.end()) items.push_back(p);
      }
      plan[static_cast<std::size_t>(s)].push_back(items);
    }
  return plan;
}

void write_picture(const fs::path& path, const Image8& image) {
  fs::create_directories(path.parent_path());
  write_image_file(path, image);
}

// Compatibility lines (each outfit, then it with every item swapped for one of the same type of
// another outfit of the split where there is one) and fill-in-the-blank questions (outfits of 3
// or more items; the right answer at column o % 4 and 3 items of other outfits), in item keys.
// `blank_position` is the blank's 1-based position, or with `index_valued` the blank item's
// `index` (as Polyvore Outfits' README defines it; the indices skip 3).
void add_tasks(FixtureSplit& split, const std::vector<std::vector<std::string>>& keys,
               const std::map<std::string, std::string>& type_of_key, bool answer_first,
               std::uint64_t seed, bool index_valued = false) {
  Rng rng(seed);
  const auto n = keys.size();
  for (std::size_t o = 0; o < n; ++o) {
    split.lines.push_back(keys[o]);
    split.labels.push_back(1);
    std::vector<std::string> negative;
    for (const std::string& key : keys[o]) {
      std::vector<std::string> same;
      for (std::size_t other = 0; other < n; ++other)
        if (other != o)
          for (const std::string& k : keys[other])
            if (type_of_key.at(k) == type_of_key.at(key)) same.push_back(k);
      negative.push_back(same.empty() ? key : same[rng.below(same.size())]);
    }
    split.lines.push_back(negative);
    split.labels.push_back(0);
  }
  for (std::size_t o = 0; o < n; ++o) {
    if (keys[o].size() < 3) continue;
    FixtureQuestion q;
    // Index-valued questions blank the last item of every other outfit: past the question's
    // positions where the indices skip.
    const std::size_t blank = index_valued ? keys[o].size() - 1 - o % 2 : o % keys[o].size();
    for (std::size_t j = 0; j < keys[o].size(); ++j)
      if (j != blank) q.question.push_back(keys[o][j]);
    q.blank_position = index_valued ? index_of(blank) : static_cast<std::int64_t>(blank) + 1;
    std::vector<std::string> wrong;
    for (std::size_t other = o + 1; wrong.size() < 3; ++other)
      if (other % n != o) wrong.push_back(keys[other % n][(o + other) % keys[other % n].size()]);
    q.answer = answer_first ? 0 : static_cast<std::int64_t>(o % 4);
    q.answers = wrong;
    q.answers.insert(q.answers.begin() + q.answer, keys[o][blank]);
    split.questions.push_back(q);
  }
}

std::string compatibility_file(const FixtureSplit& split) {
  std::vector<CompatibilityRecord> lines;
  for (std::size_t i = 0; i < split.lines.size(); ++i)
    lines.push_back({0, split.labels[i] == 1, split.lines[i]});
  return compatibility_text(lines);
}

std::string blank_file(const FixtureSplit& split) {
  std::vector<BlankRecord> questions;
  for (const FixtureQuestion& q : split.questions)
    questions.push_back({q.question, q.answers, q.blank_position});
  return blank_file_json(questions);
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& outfit_fixture_type_pairs() {
  static const std::vector<std::pair<std::string, std::string>> pairs = {
      {"tops", "bottoms"},    {"tops", "tops"},      {"tops", "shoes"},      {"tops", "scarves"},
      {"bottoms", "bottoms"}, {"bottoms", "shoes"},  {"bottoms", "scarves"}, {"shoes", "shoes"},
      {"shoes", "scarves"},   {"scarves", "scarves"}};
  return pairs;
}

std::string type_pairs_pickle(int protocol) {
  // Written by Python 3.11: pickle.dumps(pairs, protocol=2) and protocol=4; the protocol-0 bytes
  // are Python 2's form of the same list (checked with pickle.loads(..., encoding="latin1")).
  static const char p0[] =
      "(lp0\n(S'tops'\np1\nS'bottoms'\np2\ntp3\na(g1\ng1\ntp4\na(g1\nS'shoes'\np5\ntp6\na(g1\n"
      "S'scarves'\np7\ntp8\na(g2\ng2\ntp9\na(g2\ng5\ntp10\na(g2\ng7\ntp11\na(g5\ng5\ntp12\na(g5\n"
      "g7\ntp13\na(g7\ng7\ntp14\na.";
  static const char p2[] =
      "\x80\x02]q\x00(X\x04\x00\x00\x00topsq\x01X\x07\x00\x00\x00"
      "bottomsq\x02\x86q\x03h\x01h\x01\x86q\x04h\x01X\x05\x00\x00\x00"
      "shoesq\x05\x86q\x06h\x01X\x07\x00\x00\x00scarvesq\x07\x86q\x08h\x02h\x02\x86q\x09h\x02h\x05"
      "\x86q\x0ah\x02h\x07\x86q\x0bh\x05h\x05\x86q\x0ch\x05h\x07\x86q\x0dh\x07h\x07\x86q\x0e"
      "e.";
  static const char p4[] =
      "\x80\x04\x95\\\x00\x00\x00\x00\x00\x00\x00]\x94(\x8c\x04tops\x94\x8c\x07"
      "bottoms\x94\x86\x94h\x01h\x01\x86\x94h\x01\x8c\x05shoes\x94\x86\x94h\x01\x8c\x07"
      "scarves\x94\x86\x94h\x02h\x02\x86\x94h\x02h\x05\x86\x94h\x02h\x07\x86\x94h\x05h\x05\x86\x94h"
      "\x05h\x07\x86\x94h\x07h\x07\x86\x94"
      "e.";
  switch (protocol) {
    case 0:
      return std::string(p0, sizeof p0 - 1);
    case 2:
      return std::string(p2, sizeof p2 - 1);
    case 4:
      return std::string(p4, sizeof p4 - 1);
    default:
      throw std::invalid_argument("type_pairs_pickle: protocol 0, 2 or 4");
  }
}

std::int64_t fixture_image(const OutfitFixture& f, const std::string& item) {
  const auto it = std::find(f.image_order.begin(), f.image_order.end(), item);
  if (it == f.image_order.end()) throw std::invalid_argument("fixture_image: no item " + item);
  return it - f.image_order.begin();
}

std::vector<NaivePair> naive_outfit_pairs(const OutfitFixture& f, Split split,
                                          const std::set<std::string>& held_out) {
  std::vector<std::vector<std::string>> outfits;
  std::map<std::string, std::set<std::string>> items_of_type;
  for (const std::vector<std::string>& outfit : f.splits.at(split).outfits) {
    std::vector<std::string> kept;
    for (const std::string& item : outfit)
      if (!held_out.count(f.item_type.at(item))) {
        kept.push_back(item);
        items_of_type[f.item_type.at(item)].insert(item);
      }
    outfits.push_back(kept);
  }
  std::vector<NaivePair> out;
  for (const std::vector<std::string>& outfit : outfits)
    for (std::size_t j = 0; j < outfit.size(); ++j)
      for (std::size_t k = j + 1; k < outfit.size(); ++k) {
        const std::string& close_type = f.item_type.at(outfit[k]);
        if (items_of_type[close_type].size() < 2) continue;
        out.push_back({fixture_image(f, outfit[j]), fixture_image(f, outfit[k]),
                       f.item_type.at(outfit[j]), close_type});
      }
  return out;
}

OutfitFixture write_polyvore_outfits(const fs::path& root, const std::string& folder,
                                     int protocol) {
  OutfitFixture f;
  const auto plan = plan_outfits();
  std::map<std::string, ReleasedItemMetadata> metadata;
  for (int p = 0; p < kPool; ++p) {
    const std::string id = std::to_string(5000 + p);
    f.item_type[id] = type_of_pool(p);
    ReleasedItemMetadata& m = metadata[id];
    m.read = {type_of_pool(p), p % 5 == 0 ? "" : fmt::format("Title {}", p),
              fmt::format("item {}", p), std::to_string(10 + p % 7)};
    m.description = "a thing, to wear";
    m.categories = {"Women's Fashion", type_of_pool(p)};
    m.related = {"blue", "cotton"};
    write_picture(root / "images" / (id + ".jpg"), pattern_image(10, 8, 300 + p));
  }
  write_text(root / "polyvore_item_metadata.json", item_metadata_json(metadata));
  const fs::path dir = root / folder;
  write_text(dir / "typespaces.p", type_pairs_pickle(protocol));
  std::set<std::string> seen;
  for (int s = 0; s < 3; ++s) {
    FixtureSplit& split = f.splits[kSplits[s]];
    std::vector<OutfitRecord> outfits;
    std::vector<std::vector<std::string>> keys;
    std::map<std::string, std::string> type_of_key;
    for (std::size_t o = 0; o < plan[s].size(); ++o) {
      const std::string set_id = std::to_string(200000 + 1000 * s + static_cast<int>(o) * 7);
      OutfitRecord outfit{set_id, {}};
      std::vector<std::string> names, outfit_keys;
      for (std::size_t j = 0; j < plan[s][o].size(); ++j) {
        const std::string id = std::to_string(5000 + plan[s][o][j]);
        const std::string key = fmt::format("{}_{}", set_id, index_of(j));
        outfit.items.push_back({id, 0, "", index_of(j)});
        names.push_back(id);
        outfit_keys.push_back(key);
        split.item_of[key] = id;
        type_of_key[key] = f.item_type[id];
        if (seen.insert(id).second) f.image_order.push_back(id);
      }
      outfits.push_back(std::move(outfit));
      split.set_ids.push_back(set_id);
      split.outfits.push_back(names);
      keys.push_back(outfit_keys);
    }
    add_tasks(split, keys, type_of_key, false, 11 + static_cast<std::uint64_t>(s));
    write_text(dir / fmt::format("{}.json", kFileSplits[s]), polyvore_split_json(outfits));
    write_text(dir / fmt::format("compatibility_{}.txt", kFileSplits[s]),
               compatibility_file(split));
    write_text(dir / fmt::format("fill_in_blank_{}.json", kFileSplits[s]), blank_file(split));
  }
  return f;
}

MarylandFixture write_maryland_polyvore(const fs::path& root, MarylandSpelling spelling) {
  MarylandFixture m;
  OutfitFixture& f = m.outfits;
  const auto plan = plan_outfits();
  std::string csv = "categoryid,type\n";
  for (int c = 0; c < 12; ++c)
    csv += fmt::format("{},{}\n", 100 + c, kTypes[c % 4]);
  write_text(root / "category_types.csv", csv);
  for (int s = 0; s < 3; ++s) {
    FixtureSplit& split = f.splits[kSplits[s]];
    std::vector<MarylandOutfit> outfits;
    std::vector<std::vector<std::string>> keys;
    std::map<std::string, std::string> type_of_key;
    for (std::size_t o = 0; o < plan[s].size(); ++o) {
      const std::string set_id = std::to_string(30000 + 100 * s + static_cast<int>(o));
      MarylandOutfit outfit;
      outfit.set_id = set_id;
      outfit.name = "an outfit";
      outfit.image = "http://ak1.polyvoreimg.com/cgi/img-set";
      outfit.date = "One month";
      outfit.set_url = "http://www.polyvore.com/cgi/set?id=" + set_id;
      outfit.desc = "A set";
      outfit.views = 12;
      outfit.likes = 3;
      std::vector<std::string> outfit_keys;
      for (std::size_t j = 0; j < plan[s][o].size(); ++j) {
        const int p = plan[s][o][j];
        const int category = 100 + p % 4 + 4 * (p % 3);
        const std::string key = fmt::format("{}_{}", set_id, index_of(j));
        outfit.items.push_back({index_of(j), fmt::format("item {}", p), 10.5 + p, p,
                                fmt::format("http://img.polyvoreimg.com/cgi/img-thing?id={}", p),
                                category});
        outfit_keys.push_back(key);
        split.item_of[key] = key;
        f.item_type[key] = type_of_pool(p);
        type_of_key[key] = type_of_pool(p);
        f.image_order.push_back(key);
        write_picture(root / "images" / set_id / fmt::format("{}.jpg", index_of(j)),
                      pattern_image(9, 12, static_cast<std::uint64_t>(500 + 10 * s + p)));
      }
      outfits.push_back(std::move(outfit));
      split.set_ids.push_back(set_id);
      split.outfits.push_back(outfit_keys);
      keys.push_back(outfit_keys);
    }
    write_text(root / fmt::format("{}_no_dup.json", kFileSplits[s]), maryland_split_json(outfits));
    if (s == 2) {
      add_tasks(split, keys, type_of_key, true, 21);
      m.same_type.item_of = split.item_of;
      add_tasks(m.same_type, keys, type_of_key, false, 22, true);
    }
  }
  const FixtureSplit& test = f.splits[Split::Test];
  const bool readme = spelling == MarylandSpelling::Readme;
  write_text(root / (readme ? "fashion-compatibility-prediction.txt"
                            : "fashion_compatibility_prediction.txt"),
             compatibility_file(test));
  write_text(root / (readme ? "fill_in_the_blank_test.json" : "fill_in_blank_test.json"),
             blank_file(test));
  write_text(root / "same_type" / "compatibility_test.txt", compatibility_file(m.same_type));
  write_text(root / "same_type" / "fill_in_blank_test.json", blank_file(m.same_type));
  return m;
}

}  // namespace wscsl::testing
