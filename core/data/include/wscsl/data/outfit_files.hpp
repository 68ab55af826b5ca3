// The file formats of the two outfit benchmarks, read strictly into plain records (no images, no
// tensors) and written from them: Polyvore Outfits (Vasileva et al. 2018) and Maryland Polyvore
// (Han et al. 2017).
//
//   <split>.json                     a list of outfits {"set_id": str, "items": [{"item_id": str
//                                    (Polyvore Outfits) | "categoryid": int, "name": str
//                                    (Maryland), "index": int, ...}], ...}
//   polyvore_item_metadata.json      {item_id: {"semantic_category": str, "title": str,
//                                    "url_name": str, "category_id": str, ...}}
//   compatibility_<split>.txt        "label id id ..." per line, label 1 or 0, id
//   "<set_id>_<index>" fill_in_blank_<split>.json       [{"question": [id], "answers": [id],
//   "blank_position": int}]
//
// Every problem is a DataError of one sentence naming the file, the record (outfit number and
// set_id, item key, line, question number) and the field with what was expected; quoted values are
// cut and escaped (quoted_excerpt). Ids (set_id, item_id) may be JSON strings or non-negative
// integers, as files written by other tools keep them; an id holding a NUL byte is refused.
//
// Bounds a hostile file hits before memory runs out: every JSON file nests at most
// kMaxOutfitJsonDepth lists and objects and holds no string over kMaxOutfitJsonString bytes (the
// releases' longest, a description, has a few kilobytes); a compatibility line has at most
// kMaxCompatibilityLineBytes (the releases' longest, 19 items, a few hundred); and every file is a
// regular file of at most kMaxTextFileBytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "wscsl/data/index_files.hpp"

namespace wscsl {

inline constexpr int kMaxOutfitJsonDepth = 32;
inline constexpr std::size_t kMaxOutfitJsonString = std::size_t{1} << 20;
inline constexpr std::size_t kMaxCompatibilityLineBytes = std::size_t{1} << 16;

// Which of the two layouts an outfit file follows; they differ in how an item is named.
enum class OutfitLayout {
  PolyvoreOutfits,  // items name their `item_id` (images/<item_id>.jpg)
  Maryland,         // items are <set_id>_<index> and name a fine `categoryid`
                    // (images/<set_id>/<index>.jpg)
};

struct OutfitEntry {
  std::string item_id;        // Polyvore Outfits only
  std::int64_t category = 0;  // Maryland's `categoryid` only
  std::string name;           // Maryland's `name` (Han's text description) only
  std::int64_t index = 0;     // the item's number in its outfit: `<set_id>_<index>` names it
};

struct OutfitRecord {
  std::string set_id;
  std::vector<OutfitEntry> items;
};

// "<set_id>_<index>", the name compatibility lines and questions use for an item of an outfit.
std::string outfit_item_key(const std::string& set_id, std::int64_t index);

// A split file: a non-empty list of outfits, each with a set_id (unique in the file) and items
// whose `index` values are unique within the outfit.
std::vector<OutfitRecord> read_outfit_split(const std::filesystem::path& file, OutfitLayout layout);

// The fields of polyvore_item_metadata.json the released code reads (`category_id` besides).
struct ItemMetadata {
  std::string semantic_category;  // the coarse type
  std::string title;              // may be empty (the released loader then uses url_name)
  std::string url_name;
  std::string category_id;  // the fine category
};

// polyvore_item_metadata.json, keyed by item_id. Only the items in `wanted` are checked and kept
// (the file describes the items of both splits); a wanted item it does not describe is an error
// naming `wanted_by` for that item.
std::map<std::string, ItemMetadata> read_item_metadata(
    const std::filesystem::path& file, const std::map<std::string, std::string>& wanted_by);

struct CompatibilityRecord {
  std::int64_t line = 0;
  bool compatible = false;
  std::vector<std::string> items;  // "<set_id>_<index>", at least 2
};

// compatibility_<split>.txt or Maryland's fashion-compatibility-prediction.txt: a label (1 or 0)
// and at least two item names per line; blank lines are ignored. A bad line goes through `bad`.
std::vector<CompatibilityRecord> read_compatibility_file(const std::filesystem::path& file,
                                                         BadRows& bad);

struct BlankRecord {
  std::vector<std::string> question;  // at least one item name
  std::vector<std::string> answers;   // at least two item names
  // Read as published and scored nowhere: Polyvore Outfits' README calls it the blank item's
  // `index` (Vasileva's Maryland files skip as indices do), Han's code a 1-based position.
  std::int64_t blank_position = 0;
};

// fill_in_blank_<split>.json or Maryland's fill_in_the_blank_test.json.
std::vector<BlankRecord> read_blank_file(const std::filesystem::path& file);

// --- Writing: the text of each file as the releases lay it out, for the embedded outfit benchmark
// and the tests' fixtures. JSON is written compact, with a final line feed.

// A Polyvore Outfits split file: each outfit's set_id and its items' item_id and index.
std::string polyvore_split_json(const std::vector<OutfitRecord>& outfits);

// A Maryland split file holds, besides what read_outfit_split keeps, what Han's crawl recorded.
struct MarylandItem {
  std::int64_t index = 0;
  std::string name;
  double price = 0;
  std::int64_t likes = 0;
  std::string image;
  std::int64_t category = 0;  // `categoryid`
};
struct MarylandOutfit {
  std::string set_id, name, image, date, set_url, desc;
  std::int64_t views = 0, likes = 0;
  std::vector<MarylandItem> items;
};
std::string maryland_split_json(const std::vector<MarylandOutfit>& outfits);

// polyvore_item_metadata.json holds, besides the fields read_item_metadata keeps, a description
// and two lists of words.
struct ReleasedItemMetadata {
  ItemMetadata read;
  std::string description;
  std::vector<std::string> categories;  // under the release's spelling "catgeories"
  std::vector<std::string> related;
};
std::string item_metadata_json(const std::map<std::string, ReleasedItemMetadata>& items);

// Compatibility lines ("label id id ...", `line` unused) and fill-in-the-blank questions.
std::string compatibility_text(const std::vector<CompatibilityRecord>& lines);
std::string blank_file_json(const std::vector<BlankRecord>& questions);

}  // namespace wscsl
