#include "bench_command.hpp"

#include "wscsl/error.hpp"

namespace wscsl::host {

BenchCommand::BenchCommand(CLI::App& app)
    : Command(app, "bench",
              "Train and evaluate every method of a suite over its seeds; tabulate the results") {
  CLI::App& c = subcommand();
  c.add_option("suite", args_.suite, "Suite TOML file");
  c.add_option("--runs", args_.runs,
               "Tabulate these runs, already trained and evaluated, instead of a suite "
               "(nothing trains; needs --output)");
  c.add_option("--jobs", args_.jobs, "Runs trained at once, each in its own process on one thread");
  c.add_option("--output", args_.output,
               "Directory of the runs and tables (default: the suite's `output`)");
  c.add_option("--set", args_.overrides,
               "Override a key of every pipeline, e.g. --set trainer.epochs=1");
  c.add_option("--seeds", args_.seeds,
               "Train these seeds instead of the suite's and its methods', e.g. --seeds 1 for a "
               "quick pass");
  c.add_option("--run", args_.only_run, "Run only <method>/<seed> (used by --jobs)")->group("");
}

int BenchCommand::run(const Invocation& invocation) {
  std::string command_line = "wscsl";
  for (const std::string& argument : invocation.arguments)
    command_line += " " + argument;
  if (!args_.runs.empty()) return tabulate_runs(invocation.global, args_, command_line);
  if (args_.suite.empty()) throw Error("bench needs a suite file, or --runs R1 R2 ...");
  return run_bench(invocation.global, args_, command_line);
}

}  // namespace wscsl::host
