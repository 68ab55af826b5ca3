// The triplet layout of CSN's UT-Zappos-50k release, which wscsl reads (`ut_zappos`,
// `image_folder`) and writes (`wscsl make-triplets`, `wscsl export`):
//
//   <dir>/filenames.json    plain text despite its name: one image path per line, relative to the
//                           image folder; the 0-based line index is the image id
//   <dir>/tripletlists/<condition>_tripletlist_<split>.txt
//                           one triplet per line, "anchor far close": the anchor is more similar
//                           to `close` than to `far` under the condition
//   <dir>/tripletlists/<condition>_tripletlist_<split>_half_reverse.txt
//                           DiscoverNet's variant "a b c l": l = 1 is "a far close" as above,
//                           l = 0 a triplet presented reversed (b is the close image, c the far)
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "wscsl/data/index_files.hpp"

namespace wscsl {

inline constexpr const char* kCsnImageList = "filenames.json";
inline constexpr const char* kCsnTripletDir = "tripletlists";

std::filesystem::path csn_triplet_file(const std::filesystem::path& dir,
                                       const std::string& condition, std::string_view split,
                                       bool half_reverse);

// A triplet of a CSN list in wscsl's order, and whether the file presented it reversed.
struct CsnTriplet {
  std::int64_t anchor = 0;
  std::int64_t close = 0;
  std::int64_t far = 0;
  bool reversed = false;
};

// Reads one triplet list whose ids index an image list of `num_images` lines (`image_list` names
// it in messages). Wrong column counts, ids that are not non-negative integers or are out of
// range, and a 4th column other than 0 or 1 are bad rows. Blank lines are ignored.
std::vector<CsnTriplet> read_csn_triplets(const std::filesystem::path& file,
                                          std::int64_t num_images,
                                          const std::filesystem::path& image_list,
                                          bool half_reverse, BadRows& bad);
// The same for the lines of a list already read; `file` names it in messages.
std::vector<CsnTriplet> csn_triplets_from_lines(const std::vector<std::string>& lines,
                                                const std::filesystem::path& file,
                                                std::int64_t num_images,
                                                const std::filesystem::path& image_list,
                                                bool half_reverse, BadRows& bad);

// The image list: the lines of `file`, one path each (a trailing empty line is not an entry).
std::vector<std::string> read_csn_image_list(const std::filesystem::path& file);

// Whether `name` can be part of a triplet-list file name (letters, digits, '_', '-', '.').
bool valid_csn_name(const std::string& name);

}  // namespace wscsl
