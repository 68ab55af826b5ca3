#include "wscsl/data/csn_layout.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl {

void write_csn_triplets(const fs::path& file, const std::vector<Triplet>& triplets) {
  std::string text;
  text.reserve(triplets.size() * 20);
  for (const Triplet& t : triplets)
    text += fmt::format("{} {} {}\n", t.anchor, t.far, t.close);
  write_file_atomically(file, text);
}

void write_csn_half_reverse(const fs::path& file, const std::vector<Triplet>& triplets,
                            const std::vector<bool>& reversed) {
  std::string text;
  text.reserve(triplets.size() * 22);
  for (std::size_t i = 0; i < triplets.size(); ++i) {
    const Triplet& t = triplets[i];
    text += reversed[i] ? fmt::format("{} {} {} 0\n", t.anchor, t.close, t.far)
                        : fmt::format("{} {} {} 1\n", t.anchor, t.far, t.close);
  }
  write_file_atomically(file, text);
}

void write_csn_image_list(const fs::path& file, const std::vector<std::string>& paths) {
  std::string text;
  for (const std::string& p : paths) {
    if (p.find_first_of("\r\n") != std::string::npos)
      throw Error(fmt::format("{}: cannot list the image path '{}': it contains a line break",
                              file.string(), p));
    text += p + "\n";
  }
  write_file_atomically(file, text);
}

}  // namespace wscsl
