#include "wscsl/data/outfit_files.hpp"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wscsl {
namespace {

const char* json_kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a fractional number";
    default:
      return "not a JSON value";
  }
}

// A record of a JSON file, for messages: "<file>: <record>: <field> ...".
struct Where {
  const fs::path& file;
  std::string record;

  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(fmt::format("{}: {}: {}", file.string(), record, what));
  }
  // `name` is how the message names the field: "'set_id'", "items[2].index".
  const json& field(const json& object, const std::string& key, const std::string& name,
                    const char* expected) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(fmt::format("has no {}; expected {}", name, expected));
    return *it;
  }
  std::string text(const json& object, const std::string& key, const std::string& name) const {
    const json& v = field(object, key, name, "a string");
    if (!v.is_string()) fail(fmt::format("{} is {}; expected a string", name, json_kind(v)));
    return v.get<std::string>();
  }
  std::int64_t integer(const json& object, const std::string& key, const std::string& name) const {
    const json& v = field(object, key, name, "an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)
      fail(fmt::format("{} is {}, above {}; expected an integer within 64 bits", name,
                       v.get<std::uint64_t>(), INT64_MAX));
    if (!v.is_number_integer())
      fail(fmt::format("{} is {}; expected an integer", name, json_kind(v)));
    return v.get<std::int64_t>();
  }
  // An id: a string, or a non-negative integer written as one (the releases' ids are decimal
  // numbers, and a file written by another tool may keep them as JSON numbers).
  std::string id(const json& object, const std::string& key, const std::string& name) const {
    const json& v = field(object, key, name, "an id (a string or an integer)");
    std::string out;
    if (v.is_string()) {
      out = v.get<std::string>();
    } else if (v.is_number_unsigned()) {
      out = std::to_string(v.get<std::uint64_t>());
    } else {
      fail(fmt::format("{} is {}; expected an id (a string or a non-negative integer)", name,
                       json_kind(v)));
    }
    if (out.empty()) fail(fmt::format("{} is empty; expected an id", name));
    if (out.find('\0') != std::string::npos)
      fail(fmt::format("{} {} holds a NUL byte; expected an id", name, quoted_excerpt(out)));
    return out;
  }
  std::vector<std::string> names(const json& object, const std::string& key, std::size_t at_least,
                                 const char* expected) const {
    const json& v = field(object, key, "'" + key + "'", expected);
    if (!v.is_array() || v.size() < at_least)
      fail(fmt::format("'{}' is {}{}; expected {}", key, json_kind(v),
                       v.is_array() ? fmt::format(" of {} entries", v.size()) : "", expected));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        fail(fmt::format("{}[{}] is {}; expected an item name \"<set_id>_<index>\"", key, i,
                         json_kind(v[i])));
      out.push_back(v[i].get<std::string>());
      if (out.back().find('\0') != std::string::npos)
        fail(fmt::format("{}[{}] {} holds a NUL byte; expected an item name \"<set_id>_<index>\"",
                         key, i, quoted_excerpt(out.back())));
    }
    return out;
  }
};

// Refuses nesting and strings past the bounds while the file is parsed, then applies `keep`.
json::parser_callback_t bounded(const fs::path& file, const json::parser_callback_t& keep) {
  return [&file, keep](int depth, json::parse_event_t event, json& parsed) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxOutfitJsonDepth)
      throw DataError(
          fmt::format("{}: nests lists and objects more than {} deep, the bound of "
                      "an outfit file",
                      file.string(), kMaxOutfitJsonDepth));
    if ((event == json::parse_event_t::key || event == json::parse_event_t::value) &&
        parsed.is_string() && parsed.get_ref<const std::string&>().size() > kMaxOutfitJsonString)
      throw DataError(
          fmt::format("{}: a string of {} bytes, more than the {} an outfit file's "
                      "strings may have ({})",
                      file.string(), parsed.get_ref<const std::string&>().size(),
                      kMaxOutfitJsonString, quoted_excerpt(parsed.get_ref<const std::string&>())));
    return keep ? keep(depth, event, parsed) : true;
  };
}

json parse_json(const fs::path& file, const json::parser_callback_t& keep = nullptr) {
  const std::string text = read_text_file(file);
  try {
    return json::parse(text, bounded(file, keep));
  } catch (const json::parse_error& e) {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw DataError(fmt::format("{}: not valid JSON: {}", file.string(), what));
  }
}

}  // namespace

std::string outfit_item_key(const std::string& set_id, std::int64_t index) {
  return fmt::format("{}_{}", set_id, index);
}

std::vector<OutfitRecord> read_outfit_split(const fs::path& file, OutfitLayout layout) {
  const json doc = parse_json(file);
  if (!doc.is_array())
    throw DataError(fmt::format("{}: the file is {}; expected a list of outfits", file.string(),
                                json_kind(doc)));
  if (doc.empty())
    throw DataError(
        fmt::format("{}: the file lists no outfit; expected at least one", file.string()));
  std::vector<OutfitRecord> out;
  out.reserve(doc.size());
  std::set<std::string> set_ids;
  for (std::size_t o = 0; o < doc.size(); ++o) {
    const json& outfit = doc[o];
    Where at{file, fmt::format("outfit {}", o)};
    if (!outfit.is_object())
      at.fail(
          fmt::format("is {}; expected an object with 'set_id' and 'items'", json_kind(outfit)));
    OutfitRecord record;
    record.set_id = at.id(outfit, "set_id", "'set_id'");
    at.record = fmt::format("outfit {} (set_id {})", o, quoted_excerpt(record.set_id));
    if (!set_ids.insert(record.set_id).second)
      at.fail("'set_id' repeats an earlier outfit's; expected each outfit once");
    const json& items = at.field(outfit, "items", "'items'", "a list of items");
    if (!items.is_array()) at.fail(fmt::format("'items' is {}; expected a list", json_kind(items)));
    std::set<std::int64_t> indices;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const json& item = items[i];
      const std::string name = fmt::format("items[{}]", i);
      if (!item.is_object())
        at.fail(fmt::format("{} is {}; expected an object", name, json_kind(item)));
      OutfitEntry entry;
      entry.index = at.integer(item, "index", name + ".index");
      switch (layout) {
        case OutfitLayout::PolyvoreOutfits:
          entry.item_id = at.id(item, "item_id", name + ".item_id");
          break;
        case OutfitLayout::Maryland:
          entry.category = at.integer(item, "categoryid", name + ".categoryid");
          entry.name = at.text(item, "name", name + ".name");
          break;
      }
      if (!indices.insert(entry.index).second)
        at.fail(fmt::format("{}.index {} repeats an earlier item's; expected each index once", name,
                            entry.index));
      record.items.push_back(std::move(entry));
    }
    out.push_back(std::move(record));
  }
  return out;
}

std::map<std::string, ItemMetadata> read_item_metadata(
    const fs::path& file, const std::map<std::string, std::string>& wanted_by) {
  static const std::set<std::string> fields = {"semantic_category", "title", "url_name",
                                               "category_id"};
  // The release describes ~365k items with long descriptions: keep only what is read.
  const json::parser_callback_t keep = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::key) return true;
    if (depth == 1) return wanted_by.count(parsed.get_ref<const std::string&>()) > 0;
    if (depth == 2) return fields.count(parsed.get_ref<const std::string&>()) > 0;
    return true;
  };
  const json doc = parse_json(file, keep);
  if (!doc.is_object())
    throw DataError(fmt::format("{}: the file is {}; expected an object keyed by item_id",
                                file.string(), json_kind(doc)));
  std::map<std::string, ItemMetadata> out;
  for (const auto& [item_id, listed_by] : wanted_by) {
    const auto it = doc.find(item_id);
    if (it == doc.end())
      throw DataError(fmt::format("{}: describes no item {}, which {} lists", file.string(),
                                  quoted_excerpt(item_id), listed_by));
    Where at{file, fmt::format("item {}", quoted_excerpt(item_id))};
    if (!it->is_object()) at.fail(fmt::format("is {}; expected an object", json_kind(*it)));
    ItemMetadata m;
    m.semantic_category = at.text(*it, "semantic_category", "'semantic_category'");
    if (m.semantic_category.empty()) at.fail("'semantic_category' is empty; expected its type");
    m.title = at.text(*it, "title", "'title'");
    m.url_name = at.text(*it, "url_name", "'url_name'");
    m.category_id = at.text(*it, "category_id", "'category_id'");
    out.emplace(item_id, std::move(m));
  }
  return out;
}

std::vector<CompatibilityRecord> read_compatibility_file(const fs::path& file, BadRows& bad) {
  LineReader lines(file, kMaxCompatibilityLineBytes, "a compatibility line");
  std::vector<CompatibilityRecord> out;
  std::string text;
  while (lines.next(text)) {
    const std::int64_t line = lines.number();
    const std::vector<std::string_view> t = tokens(text);
    if (t.empty()) continue;
    if (t[0] != "0" && t[0] != "1") {
      bad.reject(
          file, line,
          fmt::format("the label is {}; expected 1 (compatible) or 0 (not)", quoted_excerpt(t[0])));
      continue;
    }
    if (text.find('\0') != std::string::npos) {
      bad.reject(file, line, "the line holds a NUL byte; expected item names \"<set_id>_<index>\"");
      continue;
    }
    if (t.size() < 3) {
      bad.reject(file, line,
                 fmt::format("the outfit has {} item{}; expected at least 2 after the label",
                             t.size() - 1, t.size() == 2 ? "" : "s"));
      continue;
    }
    CompatibilityRecord r;
    r.line = line;
    r.compatible = t[0] == "1";
    for (std::size_t j = 1; j < t.size(); ++j)
      r.items.emplace_back(t[j]);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<BlankRecord> read_blank_file(const fs::path& file) {
  const json doc = parse_json(file);
  if (!doc.is_array())
    throw DataError(fmt::format("{}: the file is {}; expected a list of questions", file.string(),
                                json_kind(doc)));
  std::vector<BlankRecord> out;
  out.reserve(doc.size());
  for (std::size_t q = 0; q < doc.size(); ++q) {
    Where at{file, fmt::format("question {}", q)};
    if (!doc[q].is_object())
      at.fail(
          fmt::format("is {}; expected an object with 'question', 'answers' and "
                      "'blank_position'",
                      json_kind(doc[q])));
    BlankRecord r;
    r.question = at.names(doc[q], "question", 1, "a list of at least one item name");
    r.answers = at.names(doc[q], "answers", 2, "a list of at least two item names");
    r.blank_position = at.integer(doc[q], "blank_position", "'blank_position'");
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace wscsl
