// `wscsl explore … --static OUT`: the page's views of chosen queries written as a folder that opens
// from disk (file://) — index.html with the page's script, style and answers inlined, and the
// images shown in OUT/images/ — so that it can be attached to a paper's supplement.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "explore_query.hpp"
#include "search/explore_source.hpp"

namespace wscsl::host::explore {

struct StaticExport {
  std::filesystem::path out;
  std::vector<ExploreQuery> queries;  // of the first source
  std::int64_t k = 10;
  std::vector<std::string> conditions;  // empty: every condition of the sources
};

// Throws Error naming OUT when it lies inside a run (nothing is written to runs), a condition no
// source has, or DataError for a query image that is not usable; a refused export leaves no
// folder behind.
void write_static(const std::vector<search::ExploreSource*>& sources, const StaticExport& request);

// The page with its script and style inlined and `data` (the answers) embedded for a page that
// works without a server.
std::string inline_page(const std::string& data_json);

}  // namespace wscsl::host::explore
