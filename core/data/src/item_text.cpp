#include "wscsl/data/item_text.hpp"

#include <fmt/format.h>

#include "wscsl/data/csv.hpp"
#include "wscsl/error.hpp"

namespace wscsl {
namespace {

bool ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

std::string normalised_text(std::string_view text) {
  std::string kept;
  for (char c : text)
    if (c != '\n' && static_cast<unsigned char>(c) < 0x80) kept += c;
  std::size_t begin = 0, end = kept.size();
  while (begin < end && ascii_space(kept[begin]))
    ++begin;
  while (end > begin && ascii_space(kept[end - 1]))
    --end;
  std::string out = kept.substr(begin, end - begin);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string polyvore_text_key(const std::string& title, const std::string& url_name) {
  return normalised_text(title.empty() ? url_name : title);
}

std::map<std::string, std::string> read_category_names(const std::filesystem::path& file) {
  BadRows strict;
  const CsvTable table = read_headerless_csv(
      file, {"category_id", "fine-grained category", "semantic category"}, strict);
  std::map<std::string, std::string> out;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& row = table.rows[r];
    for (std::size_t c = 0; c < row.size(); ++c)
      if (row[c].empty())
        throw DataError(at_line(file, table.lines[r],
                                fmt::format("the {} is empty; expected a row \"category_id,"
                                            "fine-grained category,semantic category\"",
                                            table.header[c])));
    if (!out.emplace(row[0], row[1]).second)
      throw DataError(at_line(
          file, table.lines[r],
          fmt::format("category_id '{}' is listed again; expected each category once", row[0])));
  }
  if (out.empty())
    throw DataError(at_line(file, 1, "the file has no rows; expected one per category_id"));
  return out;
}

}  // namespace wscsl
