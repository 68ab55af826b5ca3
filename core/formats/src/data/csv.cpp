#include "wscsl/data/csv.hpp"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace wscsl {
namespace {

struct Record {
  std::vector<std::string> fields;
  std::int64_t line = 0;
  std::string problem;  // a malformed record, read to its end
};

// Splits the text into records, following quotes across line breaks.
std::vector<Record> records(const std::string& text, const std::filesystem::path& file) {
  std::vector<Record> out;
  std::size_t i = 0;
  std::int64_t line = 1;
  while (i < text.size()) {
    Record r;
    r.line = line;
    std::string field;
    bool done = false;
    const std::size_t start = i;
    while (!done) {
      if (i < text.size() && text[i] == '"') {
        ++i;
        bool closed = false;
        while (i < text.size()) {
          if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
          } else if (text[i] == '"') {
            ++i;
            closed = true;
            break;
          } else {
            if (text[i] == '\n') ++line;
            field += text[i++];
          }
        }
        if (!closed && r.problem.empty()) r.problem = "unterminated quoted field";
        if (closed && i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r' &&
            r.problem.empty())
          r.problem = fmt::format("text after the closing quote of field {}", r.fields.size() + 1);
      }
      while (i < text.size() && text[i] != ',' && text[i] != '\n') {
        if (text[i] != '\r' || (i + 1 < text.size() && text[i + 1] != '\n')) field += text[i];
        ++i;
      }
      r.fields.push_back(std::move(field));
      field.clear();
      if (i - start > kMaxCsvRecordBytes)
        throw DataError(at_line(file, r.line,
                                fmt::format("the record is longer than {} bytes, the bound of a "
                                            "CSV record",
                                            kMaxCsvRecordBytes)));

      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      done = true;
      if (i < text.size()) ++i, ++line;  // the line break ending the record
    }
    out.push_back(std::move(r));
  }
  return out;
}

bool blank(const Record& r) {
  return r.fields.size() == 1 && r.fields[0].empty() && r.problem.empty();
}

// The records from `first` on as rows of `table`, whose header is set; blank lines are skipped.
void add_rows(CsvTable& table, std::vector<Record>& all, std::size_t first, BadRows& bad) {
  for (std::size_t i = first; i < all.size(); ++i) {
    Record& r = all[i];
    if (blank(r)) continue;
    if (!r.problem.empty()) {
      bad.reject(table.file, r.line, r.problem);
      continue;
    }
    if (r.fields.size() != table.header.size()) {
      bad.reject(table.file, r.line,
                 fmt::format("expected {} fields ({}), found {}", table.header.size(),
                             fmt::join(table.header, ", "), r.fields.size()));
      continue;
    }
    table.rows.push_back(std::move(r.fields));
    table.lines.push_back(r.line);
  }
}

}  // namespace

std::int64_t CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<std::int64_t>(i);
  return -1;
}

CsvTable read_csv(const std::filesystem::path& file, BadRows& bad) {
  return parse_csv(read_text_file(file), file, bad);
}

CsvTable parse_csv(const std::string& text, const std::filesystem::path& file, BadRows& bad) {
  CsvTable table;
  table.file = file;
  std::vector<Record> all = records(text, file);
  if (all.empty() || blank(all.front()))
    throw DataError(at_line(file, 1, "expected a header row naming the columns"));
  const Record& header = all.front();
  if (!header.problem.empty()) throw DataError(at_line(file, header.line, header.problem));
  std::set<std::string> seen;
  for (const std::string& name : header.fields) {
    if (name.empty()) throw DataError(at_line(file, 1, "the header has an empty column name"));
    if (!seen.insert(name).second)
      throw DataError(at_line(file, 1, fmt::format("the header names column '{}' twice", name)));
  }
  table.header = header.fields;
  add_rows(table, all, 1, bad);
  return table;
}

CsvTable read_headerless_csv(const std::filesystem::path& file, std::vector<std::string> columns,
                             BadRows& bad) {
  CsvTable table;
  table.file = file;
  table.header = std::move(columns);
  std::vector<Record> all = records(read_text_file(file), file);
  add_rows(table, all, 0, bad);
  return table;
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace wscsl
