// The text of an outfit item (SplitData::texts): the released Polyvore Outfits loader's text key,
// and the category label of SCE-Net's Table 4 "labels" weight branch.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace wscsl {

// The text fields every outfit dataset provides (DatasetInfo::text_fields, Resource::ItemText).
inline constexpr const char* kTitleField = "title";
inline constexpr const char* kCategoryField = "category";
// The release's precomputed text features of the train split's title keys (HGLMM, 6000 values).
inline constexpr const char* kReleasedTextFeatures = "train_hglmm_pca6000.txt";

// The released loader's normalisation of a text (mvasil/fashion-compatibility,
// polyvore_outfits.py), step by step: every '\n' is removed (not replaced); every non-ASCII byte
// is dropped (for UTF-8 text, every non-ASCII character, as encode('ascii', 'ignore')); ASCII
// whitespace (space, \t, \n, \v, \f, \r) is trimmed at both ends; ASCII letters are lower-cased.
std::string normalised_text(std::string_view text);

// An item's text key: its title, or its url_name when the title is empty (tested before
// normalising, as the released loader does: a title of only spaces keys ""), normalised. "" when
// neither holds text: the item has none.
std::string polyvore_text_key(const std::string& title, const std::string& url_name);

// Polyvore Outfits' categories.csv: rows "category_id,fine-grained category,semantic category"
// without a header. The fine-grained name by category_id; an empty field, a repeated category_id
// or a row without 3 fields is an error naming the file and line.
std::map<std::string, std::string> read_category_names(const std::filesystem::path& file);

}  // namespace wscsl
