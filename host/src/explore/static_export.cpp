#include "static_export.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "explore_routes.hpp"
#include "web_assets.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wscsl::host::explore {

namespace {

void replace_once(std::string& text, const std::string& what, const std::string& with) {
  const std::size_t at = text.find(what);
  if (at == std::string::npos)
    throw Error(fmt::format("the explorer's index.html lacks '{}'", what));
  text.replace(at, what.size(), with);
}

bool inside(const fs::path& folder, const fs::path& path) {
  const fs::path a = fs::weakly_canonical(folder), b = fs::weakly_canonical(path);
  return std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first == a.end();
}

}  // namespace

std::string inline_page(const std::string& data_json) {
  std::string page(web_asset("index.html").body);
  std::string data = data_json;
  // JSON inside <script>: no "</" may close the element early.
  for (std::size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 2))
    data.replace(at, 2, "<\\/");
  replace_once(page, "<link rel=\"stylesheet\" href=\"style.css\">",
               fmt::format("<style>\n{}</style>", web_asset("style.css").body));
  replace_once(page, "<script type=\"module\" src=\"app.js\"></script>",
               fmt::format("<script type=\"application/json\" id=\"wscsl-data\">{}</script>\n"
                           "<script type=\"module\">\n{}</script>",
                           data, web_asset("app.js").body));
  return page;
}

void write_static(const std::vector<search::ExploreSource*>& sources, const StaticExport& request) {
  for (const search::ExploreSource* s : sources)
    if (inside(s->run(), request.out) || inside(s->index(), request.out))
      throw Error(
          fmt::format("--static {}: the folder is inside {}; the explorer writes nothing "
                      "to a run or an index",
                      request.out.string(), s->run().string()));
  const std::vector<std::string> conditions =
      chosen_conditions(sources, request.conditions, "--condition");
  // Every answer and picture is made before anything is written, so that a refused query or
  // condition leaves no folder behind.
  json queries = json::object();
  json gallery = json::array();
  std::vector<std::vector<std::int64_t>> shown(sources.size());
  std::vector<std::pair<fs::path, std::string>> images;
  for (const ExploreQuery& query : request.queries) {
    json answer = neighbours_everywhere(sources, query, query.key, request.k, conditions);
    json item = answer["sides"][0]["query"];
    item["key"] = query.key;
    if (query.row < 0) {
      const std::string picture = fmt::format("images/query-{}.png", images.size());
      images.emplace_back(request.out / picture, sources[0]->file_png(query.file));
      item["picture"] = picture;
    }
    for (std::size_t side = 0; side < sources.size(); ++side) {
      const json& a = answer["sides"][side];
      if (a.contains("query") && a["query"]["row"].is_number())
        shown[side].push_back(a["query"]["row"].get<std::int64_t>());
      if (a.contains("conditions"))
        for (const json& c : a["conditions"])
          for (const json& n : c["neighbours"])
            shown[side].push_back(n["row"].get<std::int64_t>());
    }
    gallery.push_back(std::move(item));
    queries[query.key] = std::move(answer);
  }
  for (std::size_t side = 0; side < sources.size(); ++side) {
    std::sort(shown[side].begin(), shown[side].end());
    shown[side].erase(std::unique(shown[side].begin(), shown[side].end()), shown[side].end());
    for (std::int64_t row : shown[side])
      images.emplace_back(request.out / "images" / fmt::format("{}-{}.png", side, row),
                          sources[side]->png(row));
  }
  const json data = {{"k", request.k},
                     {"conditions", conditions},
                     {"summary", summaries(sources)},
                     {"gallery", gallery},
                     {"neighbours", queries}};
  const std::string page = inline_page(data.dump());
  std::error_code ec;
  const bool made = !fs::exists(request.out, ec);
  try {
    fs::create_directories(request.out / "images");
    for (const auto& [path, png] : images)
      write_file_atomically(path, png);
    write_file_atomically(request.out / "index.html", page);
  } catch (...) {
    if (made) fs::remove_all(request.out, ec);
    throw;
  }
}

}  // namespace wscsl::host::explore
