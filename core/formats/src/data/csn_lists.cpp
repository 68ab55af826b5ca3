#include "wscsl/data/csn_lists.hpp"

#include <cctype>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace wscsl {

fs::path csn_triplet_file(const fs::path& dir, const std::string& condition, std::string_view split,
                          bool half_reverse) {
  return dir / kCsnTripletDir /
         fmt::format("{}_tripletlist_{}{}.txt", condition, split,
                     half_reverse ? "_half_reverse" : "");
}

std::vector<CsnTriplet> read_csn_triplets(const fs::path& file, std::int64_t num_images,
                                          const fs::path& image_list, bool half_reverse,
                                          BadRows& bad) {
  return csn_triplets_from_lines(read_lines(file), file, num_images, image_list, half_reverse, bad);
}

std::vector<CsnTriplet> csn_triplets_from_lines(const std::vector<std::string>& lines,
                                                const fs::path& file, std::int64_t num_images,
                                                const fs::path& image_list, bool half_reverse,
                                                BadRows& bad) {
  const std::size_t columns = half_reverse ? 4 : 3;
  std::vector<CsnTriplet> out;
  out.reserve(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto line = static_cast<std::int64_t>(i + 1);
    const std::vector<std::string_view> t = tokens(lines[i]);
    if (t.empty()) continue;
    if (t.size() != columns) {
      bad.reject(
          file, line,
          fmt::format("expected {} columns ({}), found {}", columns,
                      half_reverse ? "anchor, b, c, label" : "anchor, far, close", t.size()));
      continue;
    }
    std::int64_t id[3];
    bool ok = true;
    for (int j = 0; j < 3 && ok; ++j) {
      const auto parsed = parse_id(t[static_cast<std::size_t>(j)]);
      if (!parsed) {
        bad.reject(file, line,
                   fmt::format("column {} is '{}', not an image id (a non-negative integer)", j + 1,
                               t[static_cast<std::size_t>(j)]));
        ok = false;
      } else if (*parsed >= num_images) {
        bad.reject(file, line,
                   fmt::format("image id {} is out of range: {} lists {} images (ids 0..{})",
                               *parsed, image_list.string(), num_images, num_images - 1));
        ok = false;
      } else {
        id[j] = *parsed;
      }
    }
    if (!ok) continue;
    bool reversed = false;
    if (half_reverse) {
      // DiscoverNet reads the label as float → bool; only 0 and 1 occur.
      const auto label = parse_number(t[3]);
      if (!label || (*label != 0.0 && *label != 1.0)) {
        bad.reject(file, line, fmt::format("the 4th column is '{}'; expected 0 or 1", t[3]));
        continue;
      }
      reversed = *label == 0.0;
    }
    // File order: anchor b c, where b is far and c close unless the row is reversed.
    out.push_back(reversed ? CsnTriplet{id[0], id[1], id[2], true}
                           : CsnTriplet{id[0], id[2], id[1], false});
  }
  return out;
}

std::vector<std::string> read_csn_image_list(const fs::path& file) {
  return read_lines(file);
}

bool valid_csn_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

}  // namespace wscsl
