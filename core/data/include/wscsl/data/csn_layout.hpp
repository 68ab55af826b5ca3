// Writing CSN's UT-Zappos-50k triplet layout (`wscsl make-triplets`, `wscsl export`); its reading
// and the layout itself are in csn_lists.hpp.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "wscsl/data/csn_lists.hpp"
#include "wscsl/data/triplets.hpp"

namespace wscsl {
// Writes `triplets` as "anchor far close" lines, replacing `file` atomically.
void write_csn_triplets(const std::filesystem::path& file, const std::vector<Triplet>& triplets);
// Writes DiscoverNet's `_half_reverse` form: "anchor far close 1", or "anchor close far 0" where
// `reversed[i]` (one flag per triplet), replacing `file` atomically.
void write_csn_half_reverse(const std::filesystem::path& file, const std::vector<Triplet>& triplets,
                            const std::vector<bool>& reversed);
// Writes the image list, replacing `file` atomically. A path with a line break is an error.
void write_csn_image_list(const std::filesystem::path& file, const std::vector<std::string>& paths);

}  // namespace wscsl
