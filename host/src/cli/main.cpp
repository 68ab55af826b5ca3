// wscsl: train, evaluate and inspect conditional-similarity pipelines built from plugins.
#include <c10/util/Exception.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "bench/bench.hpp"
#include "cache_command.hpp"
#include "commands.hpp"
#include "explore_command.hpp"
#include "launcher.hpp"
#include "make_splits_command.hpp"
#include "search_commands.hpp"
#include "triplet_files.hpp"
#include "wscsl/error.hpp"
#include "wscsl/version.hpp"

namespace {

int fail(const std::string& message, int status) {
  fmt::print(stderr, "{}\n", message);
  return status;
}

// The command line of one rank: this one without --nproc.
std::vector<std::string> rank_arguments(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nproc") {
      ++i;
      continue;
    }
    if (arg.rfind("--nproc=", 0) == 0) continue;
    args.push_back(arg);
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wscsl::host;
  CLI::App app("wscsl " WSCSL_VERSION_STRING
               " — conditional similarity learning from plugin pipelines");
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--plugin-path", global.plugin_paths,
                 "Plugin directory searched before WSCSL_PLUGIN_PATH (repeatable)");
  app.set_version_flag("--version", WSCSL_VERSION_STRING);

  TrainArgs train;
  std::string resume;
  auto* train_cmd =
      app.add_subcommand("train", "Train a pipeline, then evaluate it on the test split");
  train_cmd->add_option("pipeline", train.pipeline, "Pipeline TOML file");
  train_cmd->add_option("--resume", resume,
                        "Continue the run in this directory from its last checkpoint");
  train_cmd->add_option("--run-dir", train.run_dir,
                        "Run directory (default: runs/<pipeline>-<time>)");
  train_cmd->add_option("--set", train.overrides, "Override a pipeline key: --set trainer.lr=0.01");
  train_cmd->add_option("--stop-after-steps", train.stop_after_steps,
                        "Checkpoint and stop after this many steps in total (resumable)");
  int nproc = 1;
  const auto add_nproc = [&nproc](CLI::App* command) {
    command
        ->add_option("--nproc", nproc,
                     "Run as N data-parallel processes on this machine (rank 0 reports)")
        ->check(CLI::Range(1, 1024));
  };
  add_nproc(train_cmd);

  EvalArgs eval;
  auto* eval_cmd =
      app.add_subcommand("eval", "Evaluate a trained run (its best checkpoint) or one checkpoint");
  eval_cmd->add_option("target", eval.target, "Run directory or checkpoint file")->required();
  eval_cmd->add_option("--set", eval.overrides,
                       "Override a pipeline key, e.g. an evaluator option");

  EmbedArgs embed;
  auto* embed_cmd = app.add_subcommand(
      "embed", "Export per-image embeddings (φ and every ψ_k) and labels as .npy files");
  embed_cmd->add_option("target", embed.target, "Run directory or checkpoint file")->required();
  std::vector<std::string> split_names;
  for (wscsl::Split split : wscsl::kAllSplits)
    split_names.emplace_back(wscsl::split_name(split));
  std::vector<std::string> embed_splits;
  embed_cmd->add_option("--split", embed_splits, "Split to export (repeatable; default: test)")
      ->check(CLI::IsMember(split_names));
  embed_cmd->add_option("--output", embed.output, "Directory (default: <run>/embeddings)");
  embed_cmd->add_option("--set", embed.overrides, "Override a pipeline key");
  add_nproc(eval_cmd);
  add_nproc(embed_cmd);

  BenchArgs bench;
  auto* bench_cmd = app.add_subcommand(
      "bench", "Train and evaluate every method of a suite over its seeds; tabulate the results");
  bench_cmd->add_option("suite", bench.suite, "Suite TOML file");
  bench_cmd->add_option("--runs", bench.runs,
                        "Tabulate these runs, already trained and evaluated, instead of a suite "
                        "(nothing trains; needs --output)");
  bench_cmd->add_option("--jobs", bench.jobs,
                        "Runs trained at once, each in its own process on one thread");
  bench_cmd->add_option("--output", bench.output,
                        "Directory of the runs and tables (default: the suite's `output`)");
  bench_cmd->add_option("--set", bench.overrides,
                        "Override a key of every pipeline, e.g. --set trainer.epochs=1");
  bench_cmd->add_option("--seeds", bench.seeds,
                        "Train these seeds instead of the suite's and its methods', e.g. --seeds 1 "
                        "for a quick pass");
  bench_cmd->add_option("--run", bench.only_run, "Run only <method>/<seed> (used by --jobs)")
      ->group("");

  std::filesystem::path check_path;
  std::vector<std::string> check_overrides;
  auto* check_cmd = app.add_subcommand("check", "Validate a pipeline and report every problem");
  check_cmd->add_option("pipeline", check_path, "Pipeline TOML file")->required();
  check_cmd->add_option("--set", check_overrides, "Override a pipeline key");
  std::vector<std::string> skip_probe;
  check_cmd
      ->add_option("--skip-probe", skip_probe,
                   "Do not run this kind on the probe's triplets; later components get random "
                   "tensors of its declared shapes (repeatable)")
      ->check(CLI::IsMember({"backbone", "condition_module"}));

  DatasetArgs make_args;
  MakeTripletsOptions make;
  auto* make_cmd = app.add_subcommand(
      "make-triplets",
      "Draw triplets from a dataset's per-image attributes and write them in CSN's layout");
  make_cmd->add_option("pipeline", make_args.pipeline, "Pipeline TOML file (its [dataset])")
      ->required();
  make_cmd->add_option("--out", make.out, "Output directory")->required();
  make_cmd->add_option("--set", make_args.overrides, "Override a pipeline key");
  make_cmd->add_option("--train", make.train, "Training triplets per condition")
      ->capture_default_str();
  make_cmd->add_option("--val", make.val, "Validation triplets per condition")
      ->capture_default_str();
  make_cmd->add_option("--test", make.test, "Test triplets per condition")->capture_default_str();
  make_cmd->add_option("--seed", make.seed, "Seed of the draws")->capture_default_str();
  make_cmd
      ->add_option("--close-within", make.close_within,
                   "Numeric conditions: |close - anchor| <= this")
      ->capture_default_str();
  make_cmd->add_option("--far-beyond", make.far_beyond, "Numeric conditions: |far - anchor| > this")
      ->capture_default_str();
  make_cmd->add_flag("--half-reverse", make.half_reverse,
                     "Also write DiscoverNet's _half_reverse lists (a random half reversed)");

  ExportWeightsArgs export_weights;
  auto* export_weights_cmd = app.add_subcommand(
      "export-weights",
      "Write a run's trained weights (its best checkpoint) as a state dict torch.load reads");
  export_weights_cmd
      ->add_option("target", export_weights.target, "Run directory or checkpoint file")
      ->required();
  export_weights_cmd->add_option("--out", export_weights.output, "Output file (.pt)")->required();
  export_weights_cmd->add_flag("--list", export_weights.list,
                               "Print every tensor's name and shape");

  DatasetArgs export_args;
  std::filesystem::path export_out;
  auto* export_cmd = app.add_subcommand(
      "export", "Write a dataset's images, labels and triplets in CSN's layout (e.g. Fashion-CRB)");
  export_cmd->add_option("pipeline", export_args.pipeline, "Pipeline TOML file (its [dataset])")
      ->required();
  export_cmd->add_option("--out", export_out, "Output directory")->required();
  export_cmd->add_option("--set", export_args.overrides, "Override a pipeline key");

  bool plugins_json = false;
  auto* plugins_cmd = app.add_subcommand("plugins", "List the plugins found and what they provide");
  plugins_cmd->add_flag("--json", plugins_json, "JSON output");

  std::string describe_what;
  bool describe_json = false, describe_markdown = false;
  auto* describe_cmd = app.add_subcommand("describe", "Every option of a component type");
  describe_cmd
      ->add_option("what", describe_what,
                   "<kind>/<type> (e.g. condition_module/discovernet) or 'trainer'")
      ->required();
  describe_cmd->add_flag("--json", describe_json, "JSON output");
  describe_cmd->add_flag("--markdown", describe_markdown, "The options as a Markdown table");

  SearchCommands search_commands(app);
  MakeSplitsCommand make_splits_command(app);
  ExploreCommand explore_command(app);

  CacheArgs cache;
  auto* cache_cmd = app.add_subcommand(
      "cache", "List or remove the stores of decoded images (dataset.cache_dir)");
  cache_cmd->require_subcommand(1);
  cache_cmd->fallthrough();  // --cache-dir after list or remove
  cache_cmd->add_option("--cache-dir", cache.cache_dir,
                        "The folder of the stores (default: $XDG_CACHE_HOME/wscsl, else "
                        "~/.cache/wscsl)");
  auto* cache_list_cmd = cache_cmd->add_subcommand("list", "Every store, its size and sources");
  auto* cache_remove_cmd = cache_cmd->add_subcommand(
      "remove", "Remove stores (later runs that need one build it again)");
  cache_remove_cmd->add_option("stores", cache.stores, "Store files, or names in the folder");
  cache_remove_cmd->add_flag("--all", cache.all, "Every store of the folder");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    const bool data_parallel = train_cmd->parsed() || eval_cmd->parsed() || embed_cmd->parsed();
    const World world = data_parallel ? world_from_environment(std::getenv) : World{};
    if (nproc > 1 && world.size > 1)
      return fail(fmt::format("wscsl: error: --nproc starts its own processes, but this one is "
                              "already rank {} of {} started by {}",
                              world.rank, world.size, wscsl::host::launcher_name(world.launcher)),
                  2);
    std::vector<std::string> rank_args = rank_arguments(argc, argv);
    if (train_cmd->parsed()) {
      if (!resume.empty()) {
        if (!train.pipeline.empty() || !train.run_dir.empty())
          return fail("wscsl: error: --resume takes the run directory alone", 2);
        train.resume = true;
        train.run_dir = resume;
      } else if (train.pipeline.empty()) {
        return fail("wscsl: error: train needs a pipeline file (or --resume RUN_DIR)", 2);
      }
      if (nproc > 1) {
        check_training(global, train, nproc);
        if (!train.resume && train.run_dir.empty())
          rank_args.insert(rank_args.end(),
                           {"--run-dir", default_run_directory(train.pipeline).string()});
        return launch_local(nproc, rank_args);
      }
      return run_train(global, train, world);
    }
    if ((eval_cmd->parsed() || embed_cmd->parsed()) && nproc > 1)
      return launch_local(nproc, rank_args);
    if (eval_cmd->parsed()) return run_eval(global, eval, world);
    if (embed_cmd->parsed()) {
      if (!embed_splits.empty()) embed.splits.clear();
      for (const std::string& name : embed_splits) {
        wscsl::Split split{};
        if (wscsl::parse_split(name, split)) embed.splits.push_back(split);
      }
      return run_embed(global, embed, world);
    }
    if (bench_cmd->parsed()) {
      std::string command_line = "wscsl";
      for (int i = 1; i < argc; ++i)
        command_line += std::string(" ") + argv[i];
      if (!bench.runs.empty()) return tabulate_runs(global, bench, command_line);
      if (bench.suite.empty()) throw wscsl::Error("bench needs a suite file, or --runs R1 R2 ...");
      return run_bench(global, bench, command_line);
    }
    if (check_cmd->parsed()) {
      std::set<wscsl::Kind> skipped;
      for (const std::string& name : skip_probe) {
        wscsl::Kind kind{};
        if (wscsl::parse_kind(name, kind)) skipped.insert(kind);
      }
      return run_check(global, check_path, check_overrides, skipped);
    }
    if (make_cmd->parsed()) return run_make_triplets(global, make_args, make);
    if (export_cmd->parsed()) return run_export(global, export_args, export_out);
    if (export_weights_cmd->parsed()) return run_export_weights(global, export_weights);
    if (plugins_cmd->parsed()) return run_plugins(global, plugins_json);
    if (search_commands.parsed()) return search_commands.run(global);
    if (make_splits_command.parsed()) return make_splits_command.run(global);
    if (explore_command.parsed()) return explore_command.run(global);
    if (cache_list_cmd->parsed()) return run_cache_list(cache);
    if (cache_remove_cmd->parsed()) return run_cache_remove(cache);
    if (describe_cmd->parsed())
      return run_describe(global, describe_what,
                          describe_json       ? DescribeFormat::Json
                          : describe_markdown ? DescribeFormat::Markdown
                                              : DescribeFormat::Text);
  } catch (const wscsl::ConfigError& e) {
    const auto& d = e.diagnostics();
    return fail(fmt::format("{}\nwscsl: {} error{} in the configuration; nothing was run",
                            d.format(), d.error_count(), d.error_count() == 1 ? "" : "s"),
                2);
  } catch (const wscsl::PluginError& e) {
    return fail(fmt::format("wscsl: plugin error: {}", e.what()), 3);
  } catch (const wscsl::Error& e) {
    return fail(fmt::format("wscsl: error: {}", e.what()), 1);
  } catch (const c10::Error& e) {
    return fail(fmt::format("wscsl: error: {}", e.what_without_backtrace()), 1);
  } catch (const std::exception& e) {
    return fail(fmt::format("wscsl: error: {}", e.what()), 1);
  }
  return 0;
}
