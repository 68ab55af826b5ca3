// The current time as text, for file names and provenance lines.
#pragma once

#include <ctime>
#include <string>

namespace wscsl::host {

enum class TimeZone { Local, Utc };

// The current time formatted with strftime's `format`.
inline std::string now_text(const char* format, TimeZone zone) {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  if (zone == TimeZone::Utc)
    gmtime_r(&now, &parts);
  else
    localtime_r(&now, &parts);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, format, &parts);
  return buffer;
}

}  // namespace wscsl::host
