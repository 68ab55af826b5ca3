#include "check_command.hpp"

#include <set>

#include <fmt/format.h>

#include "evaluation/split_check.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/probe.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::host {

CheckCommand::CheckCommand(CLI::App& app)
    : Command(app, "check", "Validate a pipeline and report every problem") {
  CLI::App& c = subcommand();
  c.add_option("pipeline", pipeline_, "Pipeline TOML file")->required();
  c.add_option("--set", overrides_, "Override a pipeline key");
  c.add_option("--skip-probe", skip_probe_,
               "Do not run this kind on the probe's triplets; later components get random "
               "tensors of its declared shapes (repeatable)")
      ->check(CLI::IsMember({"backbone", "condition_module"}));
}

int CheckCommand::run(const Invocation& invocation) {
  std::set<Kind> skipped;
  for (const std::string& name : skip_probe_) {
    Kind kind{};
    if (parse_kind(name, kind)) skipped.insert(kind);
  }
  OpenPipeline opened = open_pipeline(invocation.global, pipeline_, overrides_);
  Pipeline& p = opened.pipeline;
  const ProbeReport probe = probe_pipeline(p, skipped);
  const std::vector<SplitSize> splits = check_splits(p);
  fmt::print("{}: pipeline is valid\n", pipeline_.string());
  fmt::print("  dataset           {}\n", p.dataset->label());
  fmt::print("  backbone          {}\n", p.backbone->label());
  fmt::print("  condition_module  {}\n", p.condition_module->label());
  for (const WeightedLoss& l : p.losses)
    fmt::print("  loss              {} × {}\n", l.weight, l.loss->label());
  for (const NamedEvaluator& e : p.evaluators)
    fmt::print("  evaluator         {} ({})\n", e.name, e.evaluator->label());
  fmt::print("  probed            {} ({} triplets, {:.0f} ms)\n", join(probe.ran, ", "),
             kProbeTriplets, probe.milliseconds);
  for (const SplitSize& s : splits)
    fmt::print("  split             {}: {} triplets over {} images\n", split_name(s.split),
               s.triplets, s.evaluated);
  return 0;
}

}  // namespace wscsl::host
