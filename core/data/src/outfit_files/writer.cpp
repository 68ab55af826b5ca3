#include <nlohmann/json.hpp>

#include "wscsl/data/outfit_files.hpp"

using nlohmann::json;

namespace wscsl {

std::string polyvore_split_json(const std::vector<OutfitRecord>& outfits) {
  json out = json::array();
  for (const OutfitRecord& outfit : outfits) {
    json items = json::array();
    for (const OutfitEntry& item : outfit.items)
      items.push_back({{"item_id", item.item_id}, {"index", item.index}});
    out.push_back({{"set_id", outfit.set_id}, {"items", items}});
  }
  return out.dump() + "\n";
}

std::string maryland_split_json(const std::vector<MarylandOutfit>& outfits) {
  json out = json::array();
  for (const MarylandOutfit& outfit : outfits) {
    json items = json::array();
    for (const MarylandItem& item : outfit.items)
      items.push_back({{"index", item.index},
                       {"name", item.name},
                       {"price", item.price},
                       {"likes", item.likes},
                       {"image", item.image},
                       {"categoryid", item.category}});
    out.push_back({{"name", outfit.name},
                   {"views", outfit.views},
                   {"items", items},
                   {"image", outfit.image},
                   {"likes", outfit.likes},
                   {"date", outfit.date},
                   {"set_url", outfit.set_url},
                   {"set_id", outfit.set_id},
                   {"desc", outfit.desc}});
  }
  return out.dump() + "\n";
}

std::string item_metadata_json(const std::map<std::string, ReleasedItemMetadata>& items) {
  json out = json::object();
  for (const auto& [item_id, item] : items)
    out[item_id] = {{"semantic_category", item.read.semantic_category},
                    {"title", item.read.title},
                    {"url_name", item.read.url_name},
                    {"category_id", item.read.category_id},
                    {"description", item.description},
                    {"catgeories", item.categories},
                    {"related", item.related}};
  return out.dump() + "\n";
}

std::string compatibility_text(const std::vector<CompatibilityRecord>& lines) {
  std::string out;
  for (const CompatibilityRecord& line : lines) {
    out += line.compatible ? "1" : "0";
    for (const std::string& item : line.items)
      out += " " + item;
    out += "\n";
  }
  return out;
}

std::string blank_file_json(const std::vector<BlankRecord>& questions) {
  json out = json::array();
  for (const BlankRecord& q : questions)
    out.push_back(
        {{"question", q.question}, {"answers", q.answers}, {"blank_position", q.blank_position}});
  return out.dump() + "\n";
}

}  // namespace wscsl
