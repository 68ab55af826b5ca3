#include "bench_suite.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "pipeline/pipeline.hpp"
#include "wscsl/config/schema.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

std::vector<std::string> seed_problems(const std::vector<std::int64_t>& seeds) {
  std::vector<std::string> problems;
  for (std::int64_t seed : seeds)
    if (seed < 0) problems.push_back(fmt::format("seeds must be >= 0, got {}", seed));
  if (std::set<std::int64_t>(seeds.begin(), seeds.end()).size() != seeds.size())
    problems.push_back("seeds must be distinct");
  return problems;
}

namespace {

const std::vector<std::string> kSuiteSections = {"suite", "methods", "evaluators"};

void check_seeds(const std::vector<std::int64_t>& seeds, FieldChecker& check) {
  for (const std::string& problem : seed_problems(seeds))
    check.error("seeds", problem);
}

struct SuiteOptions {
  std::vector<std::int64_t> seeds = {1};
  std::vector<std::string> set;
  std::string output;
  std::string table = "results";
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
  s.field("table", &O::table,
          "Name of the results tables, <output>/<table>.md and .csv: suites that share an output "
          "directory (and so their common runs) keep their own tables.");
  s.check([](const O& o, FieldChecker& check) {
    static const std::regex valid("[A-Za-z0-9_.-]+");
    if (!std::regex_match(o.table, valid))
      check.error("table", "must be a file name of letters, digits, '-', '_' and '.'");
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
  BindScope scope;
  scope.diagnostics = &diagnostics;
  scope.table = "[suite]";
  const SuiteOptions options = suite_schema().bind(section ? *section : empty, scope);
  suite.seeds = options.seeds;
  suite.overrides = options.set;
  suite.output = options.output.empty() ? fs::path("runs") / path.stem() : fs::path(options.output);
  suite.table = options.table;

  const ConfigNode* methods = table_array(suite.root, "methods", diagnostics);
  if (!suite.root.find("methods"))
    diagnostics.error({file, 1, 1}, "a suite needs [[methods]] entries (name, pipeline)");
  std::set<std::string> names;
  for (std::size_t i = 0; methods && i < methods->items().size(); ++i) {
    const ConfigNode& item = methods->items()[i];
    BindScope method_scope;
    method_scope.diagnostics = &diagnostics;
    method_scope.table = fmt::format("[methods.{}]", i);
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

std::string run_label(const Suite& suite, const BenchRun& run) {
  return fmt::format("{}/{}", suite.methods[run.method].name, run.seed);
}

}  // namespace wscsl::host
