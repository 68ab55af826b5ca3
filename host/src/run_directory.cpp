#include "run_directory.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "wscsl/config/node.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

RunDirectory RunDirectory::create(const fs::path& root) {
  std::error_code ec;
  if (fs::exists(root / "resolved.toml", ec))
    throw Error(
        fmt::format("{} already holds a run; resume it with `wscsl train --resume {}` or "
                    "choose another --run-dir",
                    root.string(), root.string()));
  fs::create_directories(root / "checkpoints", ec);
  if (ec)
    throw Error(fmt::format("cannot create run directory {}: {}", root.string(), ec.message()));
  return RunDirectory(root);
}

RunDirectory RunDirectory::open(const fs::path& root) {
  RunDirectory run(root);
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw Error(fmt::format("{} is not a run directory", root.string()));
  if (!fs::exists(run.resolved(), ec))
    throw Error(fmt::format("{} is not a run directory: it has no resolved.toml", root.string()));
  return run;
}

namespace {

// Rewrites `path` keeping the lines `keep` accepts.
template <class Keep>
void filter_lines(const fs::path& path, Keep keep) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  std::istringstream in(read_file(path));
  std::string kept, line;
  while (std::getline(in, line))
    if (keep(line)) kept += line + "\n";
  write_file_atomically(path, kept);
}

}  // namespace

void RunDirectory::truncate_logs(std::int64_t epochs_done, std::int64_t global_step) const {
  filter_lines(steps(), [&](const std::string& line) {
    if (line.empty() || line[0] == '#') return true;
    return std::stoll(line.substr(0, line.find('\t'))) <= global_step;
  });
  filter_lines(metrics(), [&](const std::string& line) {
    const std::string key = "\"epoch\": ";
    const auto at = line.find(key);
    return at != std::string::npos && std::stoll(line.substr(at + key.size())) <= epochs_done;
  });
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  return ConfigNode::floating(value).repr();
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string json_line(const std::map<std::string, double>& numbers) {
  std::string out = "{";
  bool first = true;
  // "epoch" leads so the line is easy to scan (and to truncate on resume).
  if (auto it = numbers.find("epoch"); it != numbers.end()) {
    out += fmt::format("\"epoch\": {}", static_cast<long long>(it->second));
    first = false;
  }
  for (const auto& [key, value] : numbers) {
    if (key == "epoch") continue;
    out += fmt::format("{}{}: {}", first ? "" : ", ", json_string(key), json_number(value));
    first = false;
  }
  return out + "}";
}

}  // namespace wscsl::host
