#include "bench.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "pipeline.hpp"
#include "trainer.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

const std::vector<std::string> kSuiteSections = {"suite", "methods", "evaluators"};

void check_seeds(const std::vector<std::int64_t>& seeds, FieldChecker& check) {
  for (std::int64_t seed : seeds)
    if (seed < 0) check.error("seeds", fmt::format("seeds must be >= 0, got {}", seed));
  if (std::set<std::int64_t>(seeds.begin(), seeds.end()).size() != seeds.size())
    check.error("seeds", "seeds must be distinct");
}

struct SuiteOptions {
  std::vector<std::int64_t> seeds = {1};
  std::vector<std::string> set;
  std::string output;
};

Schema<SuiteOptions> suite_schema() {
  using O = SuiteOptions;
  Schema<O> s("The suite: seeds, shared overrides and where the runs go.");
  s.field("seeds", &O::seeds, "Seeds every method is trained with (trainer.seed).");
  s.field("set", &O::set, "Overrides applied to every method, as \"key=value\".");
  s.field("output", &O::output,
          "Directory of the runs and tables, relative to this file (default: runs/<suite name> "
          "in the working directory).")
      .path();
  s.check([](const O& o, FieldChecker& check) {
    if (o.seeds.empty()) check.error("seeds", "a suite needs at least one seed");
    check_seeds(o.seeds, check);
  });
  return s;
}

struct MethodOptions {
  std::string name;
  std::string pipeline;
  std::vector<std::string> set;
  std::vector<std::int64_t> seeds;
};

Schema<MethodOptions> method_schema() {
  using O = MethodOptions;
  Schema<O> s("One method of a suite: a pipeline file and its own overrides.");
  s.field("name", &O::name, "Row label and run-directory name (letters, digits, '-', '_', '.').")
      .required();
  s.field("pipeline", &O::pipeline, "Pipeline file, relative to this file.").required().path();
  s.field("set", &O::set, "Overrides of this method only, applied after the suite's.");
  s.field("seeds", &O::seeds,
          "Seeds of this method only, replacing the suite's (default: the suite's seeds), e.g. "
          "fewer for an expensive method.");
  s.check([](const O& o, FieldChecker& check) {
    check_seeds(o.seeds, check);
    static const std::regex valid("[A-Za-z0-9][A-Za-z0-9_.-]*");
    if (!std::regex_match(o.name, valid))
      check.error("name", fmt::format("'{}' is not a valid method name (letters, digits, '-', "
                                      "'_' and '.', starting with a letter or digit)",
                                      o.name));
  });
  return s;
}

void check_sections(const ConfigNode& root, Diagnostics& diagnostics) {
  for (const ConfigMember& m : root.members()) {
    if (std::find(kSuiteSections.begin(), kSuiteSections.end(), m.key) != kSuiteSections.end())
      continue;
    std::vector<std::string> notes;
    const std::string suggestion = closest_match(m.key, kSuiteSections);
    if (!suggestion.empty()) notes.push_back(fmt::format("did you mean '{}'?", suggestion));
    notes.push_back("valid sections: " + join(kSuiteSections, ", "));
    diagnostics.error(m.key_location, fmt::format("unknown suite section '{}'", m.key), notes);
  }
}

// A section that must be an array of tables ([[name]]), or null when absent or wrong.
const ConfigNode* table_array(const ConfigNode& root, const std::string& name,
                              Diagnostics& diagnostics) {
  const ConfigNode* node = root.find(name);
  if (!node) return nullptr;
  bool ok = node->is_array();
  for (const ConfigNode& item : node->items())
    ok = ok && item.is_table();
  if (!ok) {
    diagnostics.error(node->location(),
                      fmt::format("'{}' must be an array of tables [[{}]], got {}", name, name,
                                  node->describe_type()));
    return nullptr;
  }
  return node;
}

std::string machine_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    model = line.substr(line.find(':') + 1);
    model.erase(0, model.find_first_not_of(' '));
    break;
  }
  return fmt::format("{}, {} hardware threads", model, std::thread::hardware_concurrency());
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return buffer;
}

bool completed(const BenchRun& run) {
  std::error_code ec;
  return fs::exists(RunDirectory(run.directory).results_json(), ec);
}

// Trains (or resumes) and evaluates one run in this process. Returns the train status.
int execute_run(const Session& session, const Suite& suite, const BenchRun& run,
                const std::vector<std::string>& overrides, bool single_thread) {
  const SuiteMethod& method = suite.methods[run.method];
  const ConfigNode root = run_pipeline(suite, run, overrides, single_thread);
  Pipeline pipeline = build_pipeline(root, method.pipeline, session.registry());
  const RunDirectory probe(run.directory);
  std::error_code ec;
  const bool has_run = fs::exists(probe.resolved(), ec);
  TrainRequest request;
  request.resume = has_run && fs::exists(probe.checkpoint("last"), ec);
  if (has_run && !request.resume) {
    // Stopped before its first checkpoint: nothing to keep but the logs of that attempt.
    probe.truncate_logs(0, 0);
    fs::create_directories(run.directory / "checkpoints", ec);
  }
  const RunDirectory directory = request.resume
                                     ? RunDirectory::open(run.directory)
                                     : (has_run ? probe : RunDirectory::create(run.directory));
  fmt::print("{} seed {}: {} in {}\n", method.name, run.seed,
             request.resume ? "resuming" : "training", run.directory.string());
  std::fflush(stdout);
  const TrainResult result = train(pipeline, directory, request);
  return result.outcome == TrainOutcome::Finished ? 0 : 130;
}

std::string run_label(const Suite& suite, const BenchRun& run) {
  return fmt::format("{}/{}", suite.methods[run.method].name, run.seed);
}

// Runs `pending` as child processes of this executable, at most `jobs` at once, each writing its
// output to bench.log in its run directory. Returns the labels of the runs that failed.
std::vector<std::string> execute_in_children(const GlobalOptions& global, const Suite& suite,
                                             const BenchArgs& args,
                                             const std::vector<BenchRun>& pending) {
  std::map<pid_t, const BenchRun*> running;
  std::vector<std::string> failed;
  std::size_t next = 0;
  auto wait_one = [&] {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) return;
    auto it = running.find(pid);
    if (it == running.end()) return;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    const std::string label = run_label(suite, *it->second);
    const fs::path log = it->second->directory / "bench.log";
    fmt::print("{} {}{}\n", label, ok ? "finished" : "FAILED",
               ok ? "" : fmt::format(" (see {})", log.string()));
    std::fflush(stdout);
    if (!ok) failed.push_back(label);
    running.erase(it);
  };
  while (next < pending.size() || !running.empty()) {
    if (next < pending.size() && static_cast<std::int64_t>(running.size()) < args.jobs &&
        !stop_requested()) {
      const BenchRun& run = pending[next++];
      std::vector<std::string> argv = {"wscsl"};
      for (const fs::path& p : global.plugin_paths)
        argv.insert(argv.end(), {"--plugin-path", p.string()});
      argv.insert(argv.end(),
                  {"bench", args.suite.string(), "--output", suite.output.string(), "--jobs",
                   std::to_string(args.jobs), "--run", run_label(suite, run)});
      for (const std::string& o : args.overrides)
        argv.insert(argv.end(), {"--set", o});
      std::error_code ec;
      fs::create_directories(run.directory, ec);
      const std::string log = (run.directory / "bench.log").string();
      std::vector<char*> raw;
      for (std::string& a : argv)
        raw.push_back(a.data());
      raw.push_back(nullptr);
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = ::fork();
      if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
          ::dup2(fd, STDOUT_FILENO);
          ::dup2(fd, STDERR_FILENO);
          ::close(fd);
        }
        ::execv("/proc/self/exe", raw.data());
        ::_exit(127);
      }
      if (pid < 0) throw Error(fmt::format("cannot start the run {}", run_label(suite, run)));
      fmt::print("{} started (log {})\n", run_label(suite, run), log);
      std::fflush(stdout);
      running[pid] = &run;
      continue;
    }
    if (running.empty()) break;  // stop requested: nothing more is started
    wait_one();
  }
  for (std::size_t i = next; i < pending.size(); ++i)
    failed.push_back(run_label(suite, pending[i]) + " (not started)");
  return failed;
}

std::string percent(const MeanStd& m, bool with_std) {
  if (m.count == 0) return "-";
  return with_std ? fmt::format("{:.2f} ± {:.2f}", 100 * m.mean, 100 * m.std)
                  : fmt::format("{:.2f}", 100 * m.mean);
}

std::string csv_number(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// The PNGs of a finished run: its training curves and the evaluators' pictures.
std::vector<fs::path> run_pictures(const fs::path& directory) {
  std::vector<fs::path> pictures;
  std::error_code ec;
  const RunDirectory run(directory);
  if (fs::exists(run.curves(), ec)) pictures.push_back(run.curves());
  if (fs::is_directory(run.artifacts(), ec)) {
    std::vector<fs::path> plots;
    for (const auto& entry : fs::directory_iterator(run.artifacts(), ec))
      if (entry.path().extension() == ".png") plots.push_back(entry.path());
    std::sort(plots.begin(), plots.end());
    pictures.insert(pictures.end(), plots.begin(), plots.end());
  }
  return pictures;
}

void write_tables(const Suite& suite, const std::vector<BenchRun>& runs, const BenchArgs& args,
                  const std::string& command_line, const std::string& threads) {
  std::vector<std::vector<std::map<std::string, double>>> by_method(suite.methods.size());
  std::vector<std::vector<std::int64_t>> seeds_done(suite.methods.size());
  std::vector<RunMetrics> all;
  for (const BenchRun& run : runs) {
    if (!completed(run)) continue;
    RunMetrics metrics = read_results_json(RunDirectory(run.directory).results_json());
    by_method[run.method].emplace_back(metrics.begin(), metrics.end());
    seeds_done[run.method].push_back(run.seed);
    all.push_back(std::move(metrics));
  }
  const std::vector<BenchColumn> columns = bench_columns(all);
  std::string md = fmt::format("# Benchmark `{}`\n\n", suite.source.string());
  md += fmt::format("- command: `{}`\n", command_line);
  md += fmt::format("- machine: {}\n", machine_description());
  md += fmt::format("- {} parallel run{}, trainer.threads = {} per run\n", args.jobs,
                    args.jobs == 1 ? "" : "s", threads);
  md += fmt::format("- written {}\n\n", utc_now());
  md +=
      "Accuracies and MAP in percent, mean ± sample standard deviation over the seeds that "
      "finished.\n\n| method | seeds |";
  std::string csv = "method,seeds";
  for (const BenchColumn& c : columns) {
    md += " " + c.heading + " |";
    csv += "," + csv_field(c.metric + " mean") + "," + csv_field(c.metric + " std");
  }
  md += "\n|---|---|";
  for (std::size_t i = 0; i < columns.size(); ++i)
    md += "---:|";
  md += "\n";
  csv += "\n";
  for (std::size_t m = 0; m < suite.methods.size(); ++m) {
    const auto& seeds = seeds_done[m];
    std::string seed_list;
    for (std::size_t i = 0; i < seeds.size(); ++i)
      seed_list += (i ? " " : "") + std::to_string(seeds[i]);
    md += fmt::format("| {} | {} |", suite.methods[m].name, seeds.empty() ? "none" : seed_list);
    csv += csv_field(suite.methods[m].name) + "," + csv_field(seed_list);
    for (const BenchColumn& c : columns) {
      std::vector<double> values;
      for (const auto& metrics : by_method[m]) {
        auto it = metrics.find(c.metric);
        if (it != metrics.end()) values.push_back(it->second);
      }
      const MeanStd ms = mean_std(values);
      md += " " + percent(ms, seeds.size() > 1) + " |";
      csv +=
          "," + (ms.count ? csv_number(ms.mean) : "") + "," + (ms.count ? csv_number(ms.std) : "");
    }
    md += "\n";
    csv += "\n";
  }
  md += "\n## Pictures (first finished seed of each method)\n\n";
  for (std::size_t m = 0; m < suite.methods.size(); ++m) {
    for (const BenchRun& run : runs) {
      if (run.method != m || !completed(run)) continue;
      for (const fs::path& p : run_pictures(run.directory))
        md += fmt::format("- {}: `{}`\n", suite.methods[m].name,
                          fs::relative(p, suite.output).string());
      break;
    }
  }
  write_file_atomically(suite.output / "results.md", md);
  write_file_atomically(suite.output / "results.csv", csv);
}

}  // namespace

Suite read_suite(const fs::path& path) {
  Suite suite;
  suite.source = path;
  suite.root = load_toml_file(path);
  Diagnostics diagnostics;
  check_sections(suite.root, diagnostics);
  const std::string file = suite.root.location().file;
  const ConfigNode* section = suite.root.find("suite");
  if (section && !section->is_table()) {
    diagnostics.error(section->location(), fmt::format("'suite' must be a table [suite], got {}",
                                                       section->describe_type()));
    section = nullptr;
  }
  const ConfigNode empty = ConfigNode::table({file, 1, 1});
  BindScope scope{&diagnostics, "[suite]", "", nullptr, {}};
  const SuiteOptions options = suite_schema().bind(section ? *section : empty, scope);
  suite.seeds = options.seeds;
  suite.overrides = options.set;
  suite.output = options.output.empty() ? fs::path("runs") / path.stem() : fs::path(options.output);

  const ConfigNode* methods = table_array(suite.root, "methods", diagnostics);
  if (!suite.root.find("methods"))
    diagnostics.error({file, 1, 1}, "a suite needs [[methods]] entries (name, pipeline)");
  std::set<std::string> names;
  for (std::size_t i = 0; methods && i < methods->items().size(); ++i) {
    const ConfigNode& item = methods->items()[i];
    BindScope method_scope{&diagnostics, fmt::format("[methods.{}]", i), "", nullptr, {}};
    const MethodOptions m = method_schema().bind(item, method_scope);
    if (!names.insert(m.name).second)
      diagnostics.error(item.find("name") ? item.find("name")->location() : item.location(),
                        fmt::format("method name '{}' is used twice", m.name));
    std::error_code ec;
    if (!m.pipeline.empty() && !fs::is_regular_file(m.pipeline, ec))
      diagnostics.error(item.find("pipeline")->location(),
                        fmt::format("[methods.{}] pipeline file {} does not exist", i, m.pipeline));
    suite.methods.push_back(
        {m.name, m.pipeline, m.set, m.seeds.empty() ? suite.seeds : m.seeds, item.location()});
  }
  if (diagnostics.has_errors()) throw ConfigError(diagnostics);
  suite.evaluators = table_array(suite.root, "evaluators", diagnostics);
  if (diagnostics.has_errors()) throw ConfigError(diagnostics);
  return suite;
}

std::vector<BenchRun> bench_runs(const Suite& suite) {
  std::vector<BenchRun> runs;
  for (std::size_t m = 0; m < suite.methods.size(); ++m)
    for (std::int64_t seed : suite.methods[m].seeds)
      runs.push_back(
          {m, seed, suite.output / suite.methods[m].name / fmt::format("seed-{}", seed)});
  return runs;
}

ConfigNode run_pipeline(const Suite& suite, const BenchRun& run,
                        const std::vector<std::string>& extra_overrides, bool single_thread) {
  const SuiteMethod& method = suite.methods[run.method];
  std::vector<std::string> overrides = suite.overrides;
  overrides.insert(overrides.end(), method.overrides.begin(), method.overrides.end());
  overrides.insert(overrides.end(), extra_overrides.begin(), extra_overrides.end());
  overrides.push_back(fmt::format("trainer.seed={}", run.seed));
  overrides.push_back("trainer.evaluate_after=true");
  if (single_thread) overrides.push_back("trainer.threads=1");
  ConfigNode root = read_pipeline(method.pipeline, overrides);
  if (suite.evaluators) root.set("evaluators", *suite.evaluators);
  return root;
}

RunMetrics read_results_json(const fs::path& path) {
  static const std::regex entry("^\\s*\"((?:[^\"\\\\]|\\\\.)*)\": ([^,]+),?\\s*$");
  RunMetrics metrics;
  std::istringstream in(read_file(path));
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("\"metrics\": {") != std::string::npos) {
      inside = true;
      continue;
    }
    std::smatch m;
    if (!inside || !std::regex_match(line, m, entry)) continue;
    const std::string value = m[2];
    metrics.emplace_back(
        m[1], value == "null" ? std::numeric_limits<double>::quiet_NaN() : std::stod(value));
  }
  return metrics;
}

std::vector<BenchColumn> bench_columns(const std::vector<RunMetrics>& runs) {
  const std::vector<BenchColumn> fixed = {{"GR", "alignment/gr_accuracy"},
                                          {"OT", "alignment/ot_accuracy"},
                                          {"triplet accuracy", "triplet_accuracy/accuracy"},
                                          {"reversed valid", "reversed_triplets/reversed_valid"}};
  auto present = [&](const std::string& metric) {
    for (const RunMetrics& r : runs)
      for (const auto& [name, value] : r)
        if (name == metric) return true;
    return false;
  };
  std::vector<BenchColumn> columns;
  for (const BenchColumn& c : fixed)
    if (present(c.metric)) columns.push_back(c);
  const std::string map_prefix = "retrieval/map/";
  std::vector<std::string> conditions;  // in order of first appearance
  for (const RunMetrics& r : runs)
    for (const auto& [name, value] : r)
      if (name.rfind(map_prefix, 0) == 0 &&
          std::find(conditions.begin(), conditions.end(), name) == conditions.end())
        conditions.push_back(name);
  for (const std::string& name : conditions)
    columns.push_back({"MAP " + name.substr(map_prefix.size()), name});
  return columns;
}

MeanStd mean_std(const std::vector<double>& values) {
  MeanStd r;
  double sum = 0.0;
  for (double v : values)
    if (std::isfinite(v)) sum += v, ++r.count;
  if (r.count == 0) return r;
  r.mean = sum / static_cast<double>(r.count);
  if (r.count < 2) return r;
  double squares = 0.0;
  for (double v : values)
    if (std::isfinite(v)) squares += (v - r.mean) * (v - r.mean);
  r.std = std::sqrt(squares / static_cast<double>(r.count - 1));
  return r;
}

int run_bench(const GlobalOptions& global, const BenchArgs& args, const std::string& command_line) {
  if (args.jobs < 1) throw Error("--jobs must be at least 1");
  Suite suite = read_suite(args.suite);
  if (!args.output.empty()) suite.output = args.output;
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

  std::string threads;
  for (std::size_t m = 0; m < suite.methods.size(); ++m) {
    try {
      const Pipeline p = build_pipeline(roots[m], suite.methods[m].pipeline, session.registry());
      const std::string t = std::to_string(p.trainer.resolved_threads());
      if (threads.find(t) == std::string::npos) threads += (threads.empty() ? "" : ", ") + t;
    } catch (const ConfigError& e) {
      diagnostics.append(e.diagnostics());
    }
  }
  if (diagnostics.has_errors()) throw ConfigError(diagnostics);

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
  write_tables(suite, runs, args, command_line, threads);
  fmt::print("\nresults written to {} and {}\n", (suite.output / "results.md").string(),
             (suite.output / "results.csv").string());
  if (failed.empty()) return 0;
  fmt::print(stderr, "wscsl: {} run{} did not finish: {}; run the same command again to resume\n",
             failed.size(), failed.size() == 1 ? "" : "s", join(failed, ", "));
  return stop_requested() ? 130 : 1;
}

}  // namespace wscsl::host
