// The attribute-table reader (RFC 4180 CSV), with bad rows skipped up to a limit.
#include "wscsl/data/csv.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_text(data, size, [](const std::string& text) {
    wscsl::BadRows bad(8);
    const wscsl::CsvTable table = wscsl::parse_csv(text, "fuzz.csv", bad);
    for (const auto& row : table.rows)
      if (row.size() != table.header.size()) __builtin_trap();
  });
}
