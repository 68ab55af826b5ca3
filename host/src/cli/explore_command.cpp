#include "explore_command.hpp"

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "explore/explore_routes.hpp"
#include "explore/static_export.hpp"
#include "search/explore_source.hpp"

namespace wscsl::host {

ExploreCommand::ExploreCommand(CLI::App& app)
    : Command(app, "explore",
              "Browse an index in a web page: the nearest images of a query under every "
              "condition side by side, the run's alignment, results and curves") {
  CLI::App& c = subcommand();
  ExploreArgs& a = args_;
  c.add_option("target", a.target, "Index directory, or a run directory with RUN/index")
      ->required();
  c.add_option("--run", a.run, "The run of the target index (default: the one the index names)");
  c.add_option("--compare", a.compare,
               "A second index or run shown beside the first, condition by condition, on "
               "the same queries");
  c.add_option("--compare-run", a.compare_run,
               "The run of the --compare index (default: the one the index names)");
  c.add_option("--host", a.host, "Address to listen on")->capture_default_str();
  c.add_option("--port", a.port, "Port to listen on (0: one the system chooses)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  c.add_option("--static", a.static_out,
               "Write the views of the --query queries as a folder of HTML and images instead of "
               "serving");
  c.add_option("--query", a.queries,
               "A query (repeatable): a row of the index, a file it holds (its path or "
               "the end of it), or an image file; --static shows these, the page opens on "
               "the first");
  c.add_option("-k", a.k, "Neighbours per condition (--static)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, explore::kMaxNeighbours));
  c.add_option("--condition", a.conditions,
               "--static: a condition to show, for both runs (repeatable; default: every "
               "condition)");
}

int ExploreCommand::run(const Invocation& invocation) {
  std::vector<std::unique_ptr<search::ExploreSource>> owned;
  owned.push_back(
      std::make_unique<search::ExploreSource>(invocation.global, args_.target, args_.run, "--run"));
  if (!args_.compare.empty())
    owned.push_back(std::make_unique<search::ExploreSource>(invocation.global, args_.compare,
                                                            args_.compare_run, "--compare-run"));
  std::vector<search::ExploreSource*> sources;
  for (const auto& s : owned)
    sources.push_back(s.get());

  const explore::QueryNames queries(*sources[0], args_.queries);
  if (!args_.static_out.empty()) {
    explore::StaticExport request{args_.static_out, queries.given(), args_.k, args_.conditions};
    if (request.queries.empty())
      for (std::int64_t i = 0; i < std::min<std::int64_t>(8, sources[0]->rows()); ++i) {
        const std::int64_t row =
            i * sources[0]->rows() / std::min<std::int64_t>(8, sources[0]->rows());
        request.queries.push_back({std::to_string(row), row, {}});
      }
    explore::write_static(sources, request);
    fmt::print("wrote {} ({} queries): open {}\n", args_.static_out.string(),
               request.queries.size(), (args_.static_out / "index.html").string());
    return 0;
  }
  explore::ExploreRoutes routes(sources, queries);
  explore::HttpServer server(args_.host, static_cast<unsigned short>(args_.port), {},
                             [&routes](const explore::HttpRequest& r) { return routes(r); });
  fmt::print("explore: serving {} ({} images) at http://{}:{}/ — Ctrl-C stops\n",
             sources[0]->index().string(), sources[0]->rows(), args_.host, server.port());
  std::fflush(stdout);
  server.serve_until_signal();
  fmt::print("explore: stopped\n");
  return 0;
}

}  // namespace wscsl::host
