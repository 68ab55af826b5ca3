#include "explore_query.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wscsl/error.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::explore {

namespace {

constexpr std::size_t kNamedMatches = 3;  // files of one name a refusal lists

bool whole_number(const std::string& s) {
  return !s.empty() && s.size() < 19 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

QueryNames::QueryNames(search::ExploreSource& first, const std::vector<std::string>& given)
    : first_(first) {
  for (const std::string& name : given) {
    std::error_code ec;
    if (!whole_number(name) && fs::is_regular_file(name, ec)) {
      const fs::path file = fs::canonical(name);
      if (const auto row = first.find_row(file.string()))
        given_.push_back({std::to_string(*row), *row, {}});
      else
        given_.push_back({file.string(), -1, file});
      // A file that is no usable image is refused now, not when the page asks for it.
      if (given_.back().row < 0) first.file_png(file);
    } else {
      given_.push_back(in_index(name, "--query " + name, "an image file"));
    }
    given_as_.push_back(name);
  }
}

ExploreQuery QueryNames::resolve(const std::string& name) const {
  for (std::size_t i = 0; i < given_.size(); ++i)
    if (given_[i].row < 0 &&
        (given_as_[i] == name || given_[i].key == name || ends_with(given_[i].key, "/" + name)))
      return given_[i];
  return in_index(name, "query=" + name.substr(0, 80), "an image given with --query");
}

ExploreQuery QueryNames::in_index(const std::string& name, const std::string& what,
                                  const std::string& otherwise) const {
  const std::string index = first_.index().string();
  if (whole_number(name)) {
    const std::int64_t row = std::stoll(name);
    if (row >= first_.rows())
      throw Error(fmt::format("{}: {} has no row {}; it holds rows 0 to {}", what, index, row,
                              first_.rows() - 1));
    return {std::to_string(row), row, {}};
  }
  const std::vector<std::int64_t> rows = first_.rows_named(name, kNamedMatches + 1);
  if (rows.size() == 1) return {std::to_string(rows[0]), rows[0], {}};
  if (rows.empty())
    throw Error(
        fmt::format("{}: neither a row of {} (0 to {}), the name of a file it holds, nor {}", what,
                    index, first_.rows() - 1, otherwise));
  std::vector<std::string> named;
  for (std::size_t i = 0; i < std::min(rows.size(), kNamedMatches); ++i)
    named.push_back(fmt::format("row {}: {}", rows[i], first_.label(rows[i])));
  throw Error(fmt::format("{}: {} holds {} files of that name ({}); give more of the path", what,
                          index,
                          rows.size() > kNamedMatches ? fmt::format("more than {}", kNamedMatches)
                                                      : std::to_string(rows.size()),
                          fmt::join(named, ", ")));
}

}  // namespace wscsl::host::explore
