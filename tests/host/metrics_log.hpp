// What the tests compare of a run's metrics.jsonl.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace wscsl::test {

// metrics.jsonl without its wall-clock fields (an epoch's seconds and the part of them that the
// steps waited for data).
inline std::string metrics_without_time(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string out, line;
  while (std::getline(in, line)) {
    nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(line);
    parsed.erase("seconds");
    parsed.erase("data_seconds");
    out += parsed.dump() + "\n";
  }
  return out;
}

}  // namespace wscsl::test
