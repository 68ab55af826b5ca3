#include "make_triplets_command.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "pipeline/pipeline.hpp"

namespace wscsl::host {

MakeTripletsCommand::MakeTripletsCommand(CLI::App& app)
    : Command(app, "make-triplets",
              "Draw triplets from a dataset's per-image attributes and write them in CSN's "
              "layout") {
  CLI::App& c = subcommand();
  MakeTripletsOptions& o = options_;
  c.add_option("pipeline", pipeline_, "Pipeline TOML file (its [dataset])")->required();
  c.add_option("--out", o.out, "Output directory")->required();
  c.add_option("--set", overrides_, "Override a pipeline key");
  c.add_option("--train", o.train, "Training triplets per condition")->capture_default_str();
  c.add_option("--val", o.val, "Validation triplets per condition")->capture_default_str();
  c.add_option("--test", o.test, "Test triplets per condition")->capture_default_str();
  c.add_option("--seed", o.seed, "Seed of the draws")->capture_default_str();
  c.add_option("--close-within", o.close_within, "Numeric conditions: |close - anchor| <= this")
      ->capture_default_str();
  c.add_option("--far-beyond", o.far_beyond, "Numeric conditions: |far - anchor| > this")
      ->capture_default_str();
  c.add_flag("--half-reverse", o.half_reverse,
             "Also write DiscoverNet's _half_reverse lists (a random half reversed)");
}

int MakeTripletsCommand::run(const Invocation& invocation) {
  const OpenPipeline opened = open_pipeline(invocation.global, pipeline_, overrides_);
  const Pipeline& p = opened.pipeline;
  fmt::print("wscsl: drawing triplets of {} into {}\n", p.dataset->label(), options_.out.string());
  make_triplets(*p.dataset, options_, stdout);
  return 0;
}

}  // namespace wscsl::host
