#include "explore_routes.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "web_assets.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wscsl::host::explore {

namespace {

// A request the explorer refuses: its status and sentence.
struct Refusal {
  int status;
  std::string sentence;
};

std::int64_t number(const HttpRequest& request, const std::string& name, std::int64_t fallback,
                    std::int64_t low, std::int64_t high) {
  const auto it = request.query.find(name);
  if (it == request.query.end()) return fallback;
  std::int64_t value = 0;
  const char* end = it->second.data() + it->second.size();
  const auto [at, ec] = std::from_chars(it->second.data(), end, value);
  if (ec != std::errc() || at != end || value < low || value > high)
    throw Refusal{400, fmt::format("{}={}: expected a whole number from {} to {}", name,
                                   it->second.substr(0, 40), low, high)};
  return value;
}

std::vector<std::string> conditions(const HttpRequest& request,
                                    const std::vector<search::ExploreSource*>& sources) {
  const auto it = request.query.find("conditions");
  std::vector<std::string> chosen;
  if (it != request.query.end() && !it->second.empty() && it->second != "all") {
    std::istringstream list(it->second);
    for (std::string name; std::getline(list, name, ',');)
      chosen.push_back(name.substr(0, 40));
  }
  return chosen_conditions(
      sources, chosen,
      fmt::format("conditions={}", it == request.query.end() ? "" : it->second.substr(0, 80)));
}

HttpResponse json_response(const json& body) {
  HttpResponse r;
  r.content_type = "application/json";
  r.body = body.dump();
  return r;
}

std::string_view type_of(const fs::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".png") return "image/png";
  if (ext == ".json") return "application/json";
  if (ext == ".md" || ext == ".jsonl" || ext == ".tsv" || ext == ".toml")
    return "text/plain; charset=utf-8";
  return {};
}

}  // namespace

std::vector<std::string> condition_order(const std::vector<search::ExploreSource*>& sources) {
  std::vector<std::string> order;
  for (const search::ExploreSource* s : sources)
    for (const std::string& c : s->conditions())
      if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
  return order;
}

std::vector<std::string> chosen_conditions(const std::vector<search::ExploreSource*>& sources,
                                           const std::vector<std::string>& chosen,
                                           const std::string& what) {
  const std::vector<std::string> order = condition_order(sources);
  for (const std::string& name : chosen)
    if (std::find(order.begin(), order.end(), name) == order.end()) {
      std::vector<std::string> indexes;
      for (const search::ExploreSource* s : sources)
        indexes.push_back(s->index().string());
      throw Error(fmt::format("{}: {} {} no condition '{}'; {} {}", what,
                              fmt::join(indexes, " and "), sources.size() > 1 ? "have" : "has",
                              name, sources.size() > 1 ? "they have" : "it has",
                              fmt::join(order, ", ")));
    }
  if (chosen.empty()) return order;
  std::vector<std::string> out;
  for (const std::string& c : order)
    if (std::find(chosen.begin(), chosen.end(), c) != chosen.end()) out.push_back(c);
  return out;
}

json summaries(const std::vector<search::ExploreSource*>& sources) {
  json sides = json::array();
  for (const search::ExploreSource* s : sources)
    sides.push_back(s->summary());
  return {{"conditions", condition_order(sources)}, {"sides", sides}};
}

json neighbours_everywhere(const std::vector<search::ExploreSource*>& sources,
                           const ExploreQuery& query, const std::string& shown, std::int64_t k,
                           const std::vector<std::string>& conditions) {
  json sides = json::array();
  sides.push_back(query.row >= 0
                      ? sources[0]->neighbours_of_row(query.row, k, conditions)
                      : sources[0]->neighbours_of_file(query.file, shown, k, conditions));
  const std::string label = query.row >= 0 ? sources[0]->label(query.row) : query.file.string();
  for (std::size_t i = 1; i < sources.size(); ++i) {
    search::ExploreSource& other = *sources[i];
    if (const auto same = other.find_row(label))
      sides.push_back(other.neighbours_of_row(*same, k, conditions));
    else if (fs::is_regular_file(label))
      sides.push_back(
          other.neighbours_of_file(label, query.row >= 0 ? label : shown, k, conditions));
    else
      sides.push_back({{"error", fmt::format("{} does not hold {}, and it is no file to embed",
                                             other.index().string(), label)}});
  }
  return {{"key", query.key.empty() ? json(nullptr) : json(query.key)},
          {"conditions", conditions},
          {"sides", sides}};
}

ExploreRoutes::ExploreRoutes(std::vector<search::ExploreSource*> sources, const QueryNames& queries)
    : sources_(std::move(sources)), queries_(queries) {}

HttpResponse ExploreRoutes::operator()(const HttpRequest& request) {
  try {
    if (request.path == "/" || request.path == "/index.html" || request.path == "/app.js" ||
        request.path == "/style.css") {
      if (request.method != HttpMethod::Get && request.method != HttpMethod::Head)
        throw Refusal{405, fmt::format("{} is read with GET", request.path)};
      const WebAsset asset = web_asset(request.path == "/" ? "index.html" : request.path.substr(1));
      HttpResponse r;
      r.content_type = std::string(asset.content_type);
      r.body = std::string(asset.body);
      return r;
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    if (request.path.rfind("/api/", 0) == 0) return api(request);
    if (request.path.rfind("/run/", 0) == 0) return run_file(request.path.substr(5));
    throw Refusal{404, fmt::format("The explorer has no page {}; it serves /, /api/… and /run/…",
                                   request.path.substr(0, 80))};
  } catch (const Refusal& r) {
    return error_response(r.status, r.sentence + ".");
  } catch (const DataError& e) {
    return error_response(415, e.what());
  } catch (const Error& e) {
    return error_response(400, e.what());
  }
}

search::ExploreSource& ExploreRoutes::side(const HttpRequest& request) {
  return *sources_[static_cast<std::size_t>(
      number(request, "side", 0, 0, static_cast<std::int64_t>(sources_.size()) - 1))];
}

HttpResponse ExploreRoutes::api(const HttpRequest& request) {
  const std::string what = request.path.substr(5);
  if (what == "neighbours" && request.method == HttpMethod::Post) return upload(request);
  if (request.method != HttpMethod::Get && request.method != HttpMethod::Head)
    throw Refusal{405, fmt::format("{} is read with GET", request.path)};
  if (what == "summary") {
    json summary = summaries(sources_);
    summary["queries"] = json::array();
    for (const ExploreQuery& q : queries_.given())
      summary["queries"].push_back(
          {{"key", q.key},
           {"row", q.row >= 0 ? json(q.row) : json(nullptr)},
           {"label", q.row >= 0 ? sources_[0]->label(q.row) : q.file.string()}});
    return json_response(summary);
  }
  search::ExploreSource& source = side(request);
  const auto query = request.query.find("query");
  if (what == "gallery") {
    const auto it = request.query.find("q");
    const std::string filter = it == request.query.end() ? "" : it->second.substr(0, 200);
    return json_response(source.gallery(number(request, "offset", 0, 0, source.rows()),
                                        number(request, "limit", 48, 1, kMaxGalleryPage), filter));
  }
  if (what == "neighbours") {
    const std::int64_t row = number(request, "row", -1, 0, sources_[0]->rows() - 1);
    if (row < 0 && query == request.query.end())
      throw Refusal{400, "/api/neighbours needs row=N or query=NAME, or an image POSTed"};
    const ExploreQuery asked =
        row >= 0 ? ExploreQuery{std::to_string(row), row, {}} : queries_.resolve(query->second);
    return json_response(neighbours_everywhere(sources_, asked, asked.key,
                                               number(request, "k", 10, 1, kMaxNeighbours),
                                               conditions(request, sources_)));
  }
  if (what == "image") {
    HttpResponse r;
    r.content_type = "image/png";
    r.cacheable = true;
    if (query == request.query.end()) {
      r.body = source.png(number(request, "row", 0, 0, source.rows() - 1));
      return r;
    }
    const ExploreQuery asked = queries_.resolve(query->second);
    r.body = asked.row >= 0 ? sources_[0]->png(asked.row) : sources_[0]->file_png(asked.file);
    return r;
  }
  throw Refusal{404, fmt::format("The explorer's API has no {}; it has summary, gallery, "
                                 "neighbours and image",
                                 what.substr(0, 80))};
}

HttpResponse ExploreRoutes::upload(const HttpRequest& request) {
  if (request.body.empty())
    throw Refusal{400, "POST /api/neighbours needs the image (JPEG or PNG) as the request body"};
  const std::int64_t k = number(request, "k", 10, 1, kMaxNeighbours);
  const std::vector<std::string> wanted = conditions(request, sources_);
  // The upload is written outside the index and the run, and removed once embedded.
  const fs::path file =
      fs::temp_directory_path() / fmt::format("wscsl-explore-{}-{}.upload", ::getpid(), ++uploads_);
  std::ofstream(file, std::ios::binary) << request.body;
  struct Remove {
    fs::path file;
    ~Remove() {
      std::error_code ignored;
      fs::remove(file, ignored);
    }
  } remove{file};
  try {
    return json_response(
        neighbours_everywhere(sources_, {"", -1, file}, "the dropped image", k, wanted));
  } catch (const DataError& e) {
    throw Refusal{415, e.what()};  // naming the upload as shown, not its temporary file
  }
}

HttpResponse ExploreRoutes::run_file(const std::string& rest) {
  const std::size_t slash = rest.find('/');
  HttpRequest side_request;
  side_request.query["side"] = rest.substr(0, slash);
  const search::ExploreSource& source = side(side_request);
  const std::string relative = slash == std::string::npos ? "" : rest.substr(slash + 1);
  const fs::path wanted(relative);
  const auto refuse = [&] {
    return Refusal{403, fmt::format("{} is not a file of the run's results (plots, curves, "
                                    "results) inside {}",
                                    relative.substr(0, 80), source.run().string())};
  };
  if (relative.empty() || wanted.is_absolute()) throw refuse();
  for (const fs::path& part : wanted)
    if (part == ".." || part == ".") throw refuse();
  std::error_code ec;
  const fs::path root = fs::canonical(source.run(), ec);
  const fs::path real = fs::canonical(root / wanted, ec);
  if (ec) throw Refusal{404, fmt::format("the run has no file {}", relative.substr(0, 80))};
  // A symbolic link out of the run resolves outside it.
  const auto [r, w] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
  if (r != root.end() || !fs::is_regular_file(real) || type_of(real).empty()) throw refuse();
  HttpResponse response;
  response.content_type = std::string(type_of(real));
  response.body = read_file(real);
  return response;
}

}  // namespace wscsl::host::explore
