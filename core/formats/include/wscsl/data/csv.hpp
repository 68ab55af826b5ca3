// Comma-separated tables (RFC 4180: a header row, fields optionally in double quotes, "" for a
// quote inside one), read strictly: every record must have the header's number of fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "wscsl/data/index_files.hpp"

namespace wscsl {

// The longest record a table may have (quoted line breaks included): longer is refused.
inline constexpr std::size_t kMaxCsvRecordBytes = std::size_t{1} << 20;

struct CsvTable {
  std::filesystem::path file;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::int64_t> lines;  // the line each row starts on (the header is line 1)

  // The index of a header column, or -1.
  std::int64_t column(const std::string& name) const;
};

// Reads `file`. A record with the wrong number of fields, an unterminated quote or text after a
// closing quote is a bad row (skipped through `bad` when it allows, else an error); a missing or
// empty header, or a header naming a column twice, is an error.
CsvTable read_csv(const std::filesystem::path& file, BadRows& bad);
// The same for text already read (without a byte-order mark); `file` names it in messages.
CsvTable parse_csv(const std::string& text, const std::filesystem::path& file, BadRows& bad);

// A file without a header row whose records have the named `columns` (Polyvore Outfits'
// categories.csv): `header` is `columns`, `lines` count from the file's first line, and bad rows go
// through `bad` as in read_csv.
CsvTable read_headerless_csv(const std::filesystem::path& file, std::vector<std::string> columns,
                             BadRows& bad);

// A field written so that read_csv gives it back: quoted when it holds a comma, quote or line
// break.
std::string csv_field(const std::string& value);

}  // namespace wscsl
