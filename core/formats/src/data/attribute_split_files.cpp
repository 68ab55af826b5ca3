#include "wscsl/data/attribute_split_files.hpp"

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

// The id of column `column` of a line, or the reason it is none.
bool parse_column(std::string_view token, std::size_t column, const char* what, std::int64_t& out,
                  std::string& problem) {
  const auto parsed = parse_id(token);
  if (!parsed) {
    problem =
        fmt::format("column {} is '{}', not {} (a non-negative integer)", column + 1, token, what);
    return false;
  }
  out = *parsed;
  return true;
}

}  // namespace

std::string_view attribute_split_name(AttributeSplit split) {
  return split == AttributeSplit::Valid ? "valid" : "test";
}

fs::path attribute_image_list(const fs::path& dir, std::string_view split) {
  return dir / fmt::format("filenames_{}.txt", split);
}

fs::path attribute_label_file(const fs::path& dir) {
  return dir / "label_train.txt";
}

fs::path attribute_query_file(const fs::path& dir, AttributeSplit split) {
  return dir / fmt::format("query_{}.txt", attribute_split_name(split));
}

fs::path attribute_candidate_file(const fs::path& dir, AttributeSplit split) {
  return dir / fmt::format("candidate_{}.txt", attribute_split_name(split));
}

std::vector<AttributeLine> read_attribute_lines(const fs::path& file, bool several_pairs,
                                                std::int64_t num_images, const fs::path& image_list,
                                                const std::vector<std::int64_t>& values,
                                                BadRows& bad) {
  const auto attributes = static_cast<std::int64_t>(values.size());
  std::vector<AttributeLine> out;
  const std::vector<std::string> lines = read_lines(file);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto line = static_cast<std::int64_t>(i + 1);
    const std::vector<std::string_view> t = tokens(lines[i]);
    if (t.empty()) continue;
    if (several_pairs ? (t.size() < 3 || t.size() % 2 == 0) : t.size() != 3) {
      bad.reject(
          file, line,
          several_pairs
              ? fmt::format("expected an image index and (attribute, value) pairs, found "
                            "{} columns",
                            t.size())
              : fmt::format("expected 3 columns (image, attribute, value), found {}", t.size()));
      continue;
    }
    std::string problem;
    std::int64_t image = 0;
    if (!parse_column(t[0], 0, "an image index", image, problem)) {
      bad.reject(file, line, problem);
      continue;
    }
    if (image >= num_images) {
      bad.reject(file, line,
                 fmt::format("image index {} is out of range: {} lists {} images (indices 0..{})",
                             image, image_list.string(), num_images, num_images - 1));
      continue;
    }
    std::vector<AttributeLine> pairs;
    for (std::size_t c = 1; c + 1 < t.size() && problem.empty(); c += 2) {
      AttributeLine pair{image, 0, 0, line};
      if (!parse_column(t[c], c, "an attribute", pair.attribute, problem) ||
          !parse_column(t[c + 1], c + 1, "a value", pair.value, problem))
        break;
      if (pair.attribute >= attributes)
        problem = fmt::format("attribute {} is unknown: the attribute table has {} (0..{})",
                              pair.attribute, attributes, attributes - 1);
      else if (pair.value >= values[static_cast<std::size_t>(pair.attribute)])
        problem = fmt::format("value {} of attribute {} is out of range: it has {} values (0..{})",
                              pair.value, pair.attribute,
                              values[static_cast<std::size_t>(pair.attribute)],
                              values[static_cast<std::size_t>(pair.attribute)] - 1);
      else
        pairs.push_back(pair);
    }
    if (!problem.empty()) {
      bad.reject(file, line, problem);
      continue;
    }
    out.insert(out.end(), pairs.begin(), pairs.end());
  }
  return out;
}

void write_attribute_image_list(const fs::path& file, const std::vector<std::string>& paths) {
  std::string text;
  for (const std::string& p : paths) {
    if (p.find_first_of("\r\n") != std::string::npos)
      throw Error(
          fmt::format("cannot write {}: the image path '{}' has a line break", file.string(), p));
    text += p + "\n";
  }
  write_file_atomically(file, text);
}

void write_attribute_labels(const fs::path& file, const std::vector<AttributeLine>& pairs) {
  std::string text;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const bool first = i == 0 || pairs[i - 1].image != pairs[i].image;
    if (first) text += (i == 0 ? "" : "\n") + std::to_string(pairs[i].image);
    text += fmt::format(" {} {}", pairs[i].attribute, pairs[i].value);
  }
  if (!pairs.empty()) text += "\n";
  write_file_atomically(file, text);
}

void write_attribute_queries(const fs::path& file, const std::vector<AttributeLine>& lines) {
  std::string text;
  for (const AttributeLine& l : lines)
    text += fmt::format("{} {} {}\n", l.image, l.attribute, l.value);
  write_file_atomically(file, text);
}

}  // namespace wscsl
