// Tiny outfit datasets on disk in the exact released layouts of Polyvore Outfits (Vasileva et al.)
// and Maryland Polyvore (Han et al.), with what the tests need to check a reader against them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "wscsl/plugin/dataset.hpp"

namespace wscsl::testing {

// typespaces.p of the fixtures, pickled as Python writes it: the pairs of
// outfit_fixture_type_pairs(), with protocol 0 as Python 2 writes str (the STRING opcode), or
// Python 3's protocol 2 or 4 (generated once with /usr/bin/python3's pickle.dumps).
std::string type_pairs_pickle(int protocol);
// (tops, bottoms), (tops, tops), (tops, shoes), (tops, scarves), (bottoms, bottoms), …,
// (scarves, scarves): every pair of the 4 types, condition k the k-th.
const std::vector<std::pair<std::string, std::string>>& outfit_fixture_type_pairs();

// Lines and questions name items "<set_id>_<index>" (FixtureSplit::item_of gives the item).
struct FixtureQuestion {
  std::vector<std::string> question;
  std::vector<std::string> answers;
  std::int64_t answer = 0;  // the right column
  std::int64_t blank_position = 0;
};

struct FixtureSplit {
  std::vector<std::string> set_ids;
  std::vector<std::vector<std::string>> outfits;  // item names (item_id, or <set_id>_<index>)
  std::map<std::string, std::string> item_of;     // "<set_id>_<index>" → item name
  std::vector<std::vector<std::string>> lines;    // compatibility lines
  std::vector<std::int64_t> labels;
  std::vector<FixtureQuestion> questions;
};

struct OutfitFixture {
  std::map<std::string, std::string> item_type;  // by item name
  std::map<Split, FixtureSplit> splits;          // train, val, test
  // Item names in image-id order: first appearance in the train, val, test files.
  std::vector<std::string> image_order;
};

// The image id of an item: its place in image_order.
std::int64_t fixture_image(const OutfitFixture& f, const std::string& item);

// A naive reference of the released loader's training pairs: every j < k of every outfit of
// `split`, without the items of `held_out` types, except pairs whose close item's type has no
// other item in those outfits.
struct NaivePair {
  std::int64_t anchor = 0, close = 0;
  std::string anchor_type, close_type;
};
std::vector<NaivePair> naive_outfit_pairs(const OutfitFixture& f, Split split,
                                          const std::set<std::string>& held_out = {});

// Polyvore Outfits under `root`: polyvore_item_metadata.json (every released key),
// images/<item_id>.jpg and <root>/<folder>/{train,valid,test}.json, typespaces.p (pickled with
// `protocol`), compatibility_{train,valid,test}.txt, fill_in_blank_{train,valid,test}.json. Outfits
// of 2 to 5 items with 1-based indices that skip 3; some hold two items of one type; some items
// recur.
OutfitFixture write_polyvore_outfits(const std::filesystem::path& root,
                                     const std::string& folder = "nondisjoint", int protocol = 2);

// How Han's two test files are named: as the release's README spells them
// (fashion-compatibility-prediction.txt, fill_in_the_blank_test.json) or as his scripts open them
// (fashion_compatibility_prediction.txt, fill_in_blank_test.json).
enum class MarylandSpelling { Readme, Scripts };

// Maryland Polyvore under `root`: {train,valid,test}_no_dup.json (items with index, name, price,
// likes, image, categoryid), images/<set_id>/<index>.jpg, category_types.csv (categoryid,type),
// Han's test files named by `spelling` (answers[0] right, blank_position 1-based), and
// Vasileva-style same-type files same_type/compatibility_test.txt and
// same_type/fill_in_blank_test.json (answer found by set_id, blank_position the blank item's
// index, which skips). The returned test split holds Han's questions and lines; `same_type` the
// others.
struct MarylandFixture {
  OutfitFixture outfits;
  FixtureSplit same_type;  // its outfits and set_ids are empty
};
MarylandFixture write_maryland_polyvore(const std::filesystem::path& root,
                                        MarylandSpelling spelling = MarylandSpelling::Readme);

}  // namespace wscsl::testing
