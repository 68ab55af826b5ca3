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

#include "http_server.hpp"
#include "search/explore_source.hpp"

namespace wscsl::host::explore {

inline constexpr std::int64_t kMaxNeighbours = 100;
inline constexpr std::int64_t kMaxGalleryPage = 500;

// The neighbours of one query in every source: side 0 is queried by `row` (or the image file);
// another side by the row holding the same image, else by embedding that image's file through its
// run, else it answers why it cannot.
// `body` is {sides: [answer of each source]}; `rows[side]` the rows whose pictures that side's
// answer shows.
struct EverywhereAnswer {
  nlohmann::json body;
  std::vector<std::vector<std::int64_t>> rows;
};
EverywhereAnswer neighbours_everywhere(const std::vector<search::ExploreSource*>& sources,
                                       std::int64_t row, std::int64_t k,
                                       const std::vector<std::string>& conditions);
// {sides: [summary of each source]}
nlohmann::json summaries(const std::vector<search::ExploreSource*>& sources);

class ExploreRoutes {
 public:
  // `sources`: one, or two to compare; they outlive the routes.
  explicit ExploreRoutes(std::vector<search::ExploreSource*> sources);
  HttpResponse operator()(const HttpRequest& request);

 private:
  HttpResponse api(const HttpRequest& request);
  HttpResponse upload(const HttpRequest& request);
  HttpResponse run_file(const std::string& rest);
  search::ExploreSource& side(const HttpRequest& request);

  std::vector<search::ExploreSource*> sources_;
  std::mutex mutex_;  // the sources answer one request at a time
  std::uint64_t uploads_ = 0;
};

}  // namespace wscsl::host::explore
