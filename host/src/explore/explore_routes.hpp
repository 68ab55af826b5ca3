// The explorer's answers: the page's files, its JSON API over one or two ExploreSources, the
// images of their rows and the files of their runs. Every request is checked before it reaches a
// source — numbers in range, conditions the index has, paths inside the run — and refused with a
// status and one sentence otherwise.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "explore_query.hpp"
#include "http_server.hpp"
#include "search/explore_source.hpp"

namespace wscsl::host::explore {

inline constexpr std::int64_t kMaxNeighbours = 100;
inline constexpr std::int64_t kMaxGalleryPage = 500;

// The conditions a view shows, in order: the first index's, then those only a compared one has.
std::vector<std::string> condition_order(const std::vector<search::ExploreSource*>& sources);
// `chosen` (empty: every condition) in condition_order's order; throws Error naming `what` was
// asked and a condition no index has.
std::vector<std::string> chosen_conditions(const std::vector<search::ExploreSource*>& sources,
                                           const std::vector<std::string>& chosen,
                                           const std::string& what);

// {key, conditions, sides: [answer of each source]}: the neighbours of one query under
// `conditions` (in that order) in every source. Side 0 is asked for the query's row or file;
// another side for the row holding the same image, else for that image's file embedded through
// its run, else it answers why it cannot. `shown` names a file query in the answer.
nlohmann::json neighbours_everywhere(const std::vector<search::ExploreSource*>& sources,
                                     const ExploreQuery& query, const std::string& shown,
                                     std::int64_t k, const std::vector<std::string>& conditions);
// {conditions: condition_order, sides: [summary of each source]}
nlohmann::json summaries(const std::vector<search::ExploreSource*>& sources);

class ExploreRoutes {
 public:
  // `sources`: one, or two to compare; they and `queries` (of the first) outlive the routes.
  ExploreRoutes(std::vector<search::ExploreSource*> sources, const QueryNames& queries);
  HttpResponse operator()(const HttpRequest& request);

 private:
  HttpResponse api(const HttpRequest& request);
  HttpResponse upload(const HttpRequest& request);
  HttpResponse run_file(const std::string& rest);
  search::ExploreSource& side(const HttpRequest& request);

  std::vector<search::ExploreSource*> sources_;
  const QueryNames& queries_;
  std::mutex mutex_;  // the sources answer one request at a time
  std::uint64_t uploads_ = 0;
};

}  // namespace wscsl::host::explore
