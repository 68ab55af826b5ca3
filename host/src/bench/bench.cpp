#include "bench.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "bench_pool.hpp"
#include "bench_tables.hpp"
#include "distributed/placement.hpp"
#include "evaluation/split_check.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/session.hpp"
#include "run/run_directory.hpp"
#include "train/trainer.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

// Trains (or resumes) and evaluates one run in this process. Returns the train status.
int execute_run(const Session& session, const Suite& suite, const BenchRun& run,
                const std::vector<std::string>& overrides, bool single_thread) {
  const SuiteMethod& method = suite.methods[run.method];
  const ConfigNode root = run_pipeline(suite, run, overrides, single_thread);
  Pipeline pipeline = build_pipeline(root, method.pipeline, session.registry());
  // As `wscsl train`: every split read and the evaluators held to them before a step is taken.
  check_splits(pipeline);
  std::error_code ec;
  const bool has_run = fs::exists(RunDirectory(run.directory).resolved(), ec);
  const RunDirectory directory =
      has_run ? RunDirectory::open(run.directory) : RunDirectory::create(run.directory);
  const RunLock lock(directory);
  TrainRequest request;
  request.resume = has_run && resumable(directory);
  fmt::print("{} seed {}: {} in {}\n", method.name, run.seed,
             request.resume ? "resuming" : "training", run.directory.string());
  std::fflush(stdout);
  const TrainResult result = train(pipeline, directory, request);
  return result.outcome == TrainOutcome::Finished ? 0 : 130;
}

// What makes two runs of a method the same experiment: the resolved pipeline without what a run
// records about itself, its seed, and the threads that --jobs chooses.
ConfigNode experiment_of(ConfigNode resolved) {
  resolved.erase("provenance");
  if (ConfigNode* trainer = resolved.find("trainer")) {
    trainer->erase("seed");
    trainer->erase("threads");
  }
  return resolved;
}

// The dotted key of the first value that differs between two configurations ("dataset.root",
// "losses.2.weight"); empty when they are equal.
std::string first_difference(const ConfigNode& a, const ConfigNode& b, const std::string& at) {
  const auto below = [&](const std::string& key) { return at.empty() ? key : at + "." + key; };
  if (a.is_table() && b.is_table()) {
    for (const ConfigMember& m : a.members()) {
      const ConfigNode* other = b.find(m.key);
      if (!other) return below(m.key);
      if (std::string d = first_difference(m.value, *other, below(m.key)); !d.empty()) return d;
    }
    for (const ConfigMember& m : b.members())
      if (!a.find(m.key)) return below(m.key);
    return {};
  }
  if (a.is_array() && b.is_array() && a.items().size() == b.items().size()) {
    for (std::size_t i = 0; i < a.items().size(); ++i)
      if (std::string d = first_difference(a.items()[i], b.items()[i], below(std::to_string(i)));
          !d.empty())
        return d;
    return {};
  }
  return a == b ? std::string() : at;
}

// A finished run is reused only if it was trained with the method's pipeline as it is now: a
// pipeline edited since would otherwise put old numbers in the new table.
void check_finished_run(const Suite& suite, const BenchRun& run, const ConfigNode& method_resolved,
                        Diagnostics& diagnostics) {
  const RunDirectory directory(run.directory);
  const std::string difference = first_difference(
      experiment_of(load_toml_file(directory.resolved())), experiment_of(method_resolved), "");
  if (difference.empty()) return;
  const SuiteMethod& method = suite.methods[run.method];
  diagnostics.error(
      method.where,
      fmt::format("{} has finished, trained with another pipeline than method '{}' "
                  "has now ({}; first difference: {})",
                  run.directory.string(), method.name, method.pipeline.string(), difference),
      {"remove that run directory to train it again, or give the method a new name"});
}

}  // namespace

int run_bench(const GlobalOptions& global, const BenchArgs& args, const std::string& command_line) {
  if (args.jobs < 1) throw Error("--jobs must be at least 1");
  Suite suite = read_suite(args.suite);
  if (!args.output.empty()) suite.output = args.output;
  if (!args.seeds.empty()) {
    const std::vector<std::string> problems = seed_problems(args.seeds);
    if (!problems.empty()) throw Error(fmt::format("--seeds: {}", problems.front()));
    for (SuiteMethod& method : suite.methods)
      method.seeds = args.seeds;
  }
  const std::vector<BenchRun> runs = bench_runs(suite);
  const bool single_thread = args.jobs > 1;

  // Every method's pipeline is checked before anything trains, with every problem reported.
  std::vector<ConfigNode> roots;
  std::vector<fs::path> plugin_paths;
  Diagnostics diagnostics;
  for (const BenchRun& run : runs) {
    if (run.seed != suite.methods[run.method].seeds.front()) continue;
    try {
      roots.push_back(run_pipeline(suite, run, args.overrides, single_thread));
      for (const fs::path& p : pipeline_plugin_paths(roots.back()))
        plugin_paths.push_back(p);
    } catch (const ConfigError& e) {
      diagnostics.append(e.diagnostics());
    }
  }
  if (diagnostics.has_errors()) throw ConfigError(diagnostics);
  const Session session(global, plugin_paths);

  install_stop_handlers();
  if (!args.only_run.empty()) {
    for (const BenchRun& run : runs)
      if (run_label(suite, run) == args.only_run)
        return execute_run(session, suite, run, args.overrides, single_thread);
    throw Error(fmt::format("--run {}: no such run in {}", args.only_run, args.suite.string()));
  }

  BenchProvenance provenance{command_line, args.jobs, ""};
  std::vector<std::vector<DeclaredMetric>> declared;
  std::vector<ConfigNode> resolved;
  for (std::size_t m = 0; m < suite.methods.size(); ++m) {
    try {
      const Pipeline p = build_pipeline(roots[m], suite.methods[m].pipeline, session.registry());
      resolved.push_back(p.resolved);
      const std::string t = std::to_string(place(p.trainer, World{}).threads);
      std::string& threads = provenance.threads;
      if (threads.find(t) == std::string::npos) threads += (threads.empty() ? "" : ", ") + t;
      declared.push_back(declared_metrics(p));
      diagnostics.append(p.warnings);
    } catch (const ConfigError& e) {
      diagnostics.append(e.diagnostics());
    }
  }
  if (!diagnostics.has_errors())
    for (const BenchRun& run : runs)
      if (completed(run)) check_finished_run(suite, run, resolved[run.method], diagnostics);
  if (diagnostics.has_errors()) throw ConfigError(diagnostics);
  if (!diagnostics.empty()) fmt::print(stderr, "{}\n", diagnostics.format());

  std::vector<BenchRun> pending;
  for (const BenchRun& run : runs) {
    if (completed(run))
      fmt::print("{} already finished ({}), skipped\n", run_label(suite, run),
                 run.directory.string());
    else
      pending.push_back(run);
  }
  std::vector<std::string> failed;
  if (args.jobs == 1) {
    for (const BenchRun& run : pending) {
      if (stop_requested()) {
        failed.push_back(run_label(suite, run) + " (not started)");
        continue;
      }
      try {
        if (execute_run(session, suite, run, args.overrides, false) != 0)
          failed.push_back(run_label(suite, run) + " (interrupted)");
      } catch (const std::exception& e) {
        fmt::print(stderr, "wscsl: error in {}: {}\n", run_label(suite, run), e.what());
        failed.push_back(run_label(suite, run));
      }
    }
  } else {
    failed = execute_in_children(global, suite, args, pending);
  }
  write_tables(suite, runs, bench_columns(declared), provenance);
  fmt::print("\nresults written to {} and {}\n", (suite.output / (suite.table + ".md")).string(),
             (suite.output / (suite.table + ".csv")).string());
  if (failed.empty()) return 0;
  fmt::print(stderr, "wscsl: {} run{} did not finish: {}; run the same command again to resume\n",
             failed.size(), failed.size() == 1 ? "" : "s", join(failed, ", "));
  return stop_requested() ? 130 : 1;
}

int tabulate_runs(const GlobalOptions& global, const BenchArgs& args,
                  const std::string& command_line) {
  if (args.output.empty())
    throw Error("--runs needs --output DIR, the directory results.md and results.csv go to");
  if (!args.overrides.empty() || !args.seeds.empty() || args.jobs != 1 || !args.suite.empty())
    throw Error(
        "--runs tabulates runs as they were trained: a suite, --set, --seeds and --jobs "
        "do not go with it");
  Suite suite;
  suite.output = args.output;
  std::vector<BenchRun> runs;
  std::vector<ConfigNode> roots;
  std::vector<fs::path> plugin_paths;
  std::vector<std::string> names;
  for (const fs::path& directory : args.runs) {
    const RunDirectory run = RunDirectory::open(directory);
    std::error_code ec;
    if (!fs::exists(run.results_json(), ec))
      throw Error(fmt::format(
          "{} has no results.json: it has not finished training (wscsl train --resume {}) or "
          "was not evaluated (wscsl eval {})",
          directory.string(), directory.string(), directory.string()));
    roots.push_back(load_toml_file(run.resolved()));
    for (const fs::path& p : pipeline_plugin_paths(roots.back()))
      plugin_paths.push_back(p);
    const ConfigNode* trainer = roots.back().find("trainer");
    const ConfigNode* seed = trainer ? trainer->find("seed") : nullptr;
    std::string name = directory.lexically_normal().filename().string();
    if (name.empty()) name = directory.lexically_normal().parent_path().filename().string();
    if (std::find(names.begin(), names.end(), name) != names.end()) name = directory.string();
    names.push_back(name);
    suite.methods.push_back({name, run.resolved(), {}, {}, {}});
    runs.push_back(
        {suite.methods.size() - 1, seed && seed->is_integer() ? seed->as_integer() : 0, directory});
  }
  suite.source = join(names, ", ");
  const Session session(global, plugin_paths);
  BenchProvenance provenance{command_line, 1, ""};
  std::vector<std::vector<DeclaredMetric>> declared;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const Pipeline p =
        build_pipeline(roots[r], RunDirectory(runs[r].directory).resolved(), session.registry());
    declared.push_back(declared_metrics(p));
    const std::string t = std::to_string(place(p.trainer, World{}).threads);
    std::string& threads = provenance.threads;
    if (threads.find(t) == std::string::npos) threads += (threads.empty() ? "" : ", ") + t;
  }
  std::error_code ec;
  fs::create_directories(suite.output, ec);
  if (ec) throw Error(fmt::format("cannot create {}: {}", suite.output.string(), ec.message()));
  write_tables(suite, runs, bench_columns(declared), provenance);
  fmt::print("{} runs tabulated, none trained: {} and {}\n", runs.size(),
             (suite.output / (suite.table + ".md")).string(),
             (suite.output / (suite.table + ".csv")).string());
  return 0;
}

}  // namespace wscsl::host
