// Reading and writing TOML. The TOML++ library stays behind this header
// (core/sdk/src/config/toml.cpp is the only translation unit that includes it).
#pragma once

#include <filesystem>
#include <string>

#include "wscsl/config/diagnostics.hpp"
#include "wscsl/config/node.hpp"

namespace wscsl {

// Parses a TOML file into a located tree. Syntax errors, unreadable files, files over 1 MiB and
// nesting deeper than 32 levels throw ConfigError with the position.
ConfigNode load_toml_file(const std::filesystem::path& path);

// Parses TOML text; `origin` names it in locations and messages.
ConfigNode parse_toml(const std::string& text, const std::string& origin);

// Applies one "--set a.b.c=value" override. The value is read as a TOML value and, if that fails,
// as a bare string. Array elements are addressed by index ("losses.0.margin"). Problems are
// reported to `diagnostics` at the override's own location.
void apply_override(ConfigNode& root, const std::string& assignment, Diagnostics& diagnostics);

// Writes a tree as TOML, keeping member order: scalars first, then sub-tables and arrays of tables.
std::string to_toml(const ConfigNode& root);

}  // namespace wscsl
