#include "export_command.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "pipeline/pipeline.hpp"
#include "triplet_files.hpp"

namespace wscsl::host {

ExportCommand::ExportCommand(CLI::App& app)
    : Command(app, "export",
              "Write a dataset's images, labels and triplets in CSN's layout (e.g. Fashion-CRB)") {
  CLI::App& c = subcommand();
  c.add_option("pipeline", pipeline_, "Pipeline TOML file (its [dataset])")->required();
  c.add_option("--out", out_, "Output directory")->required();
  c.add_option("--set", overrides_, "Override a pipeline key");
}

int ExportCommand::run(const Invocation& invocation) {
  const OpenPipeline opened = open_pipeline(invocation.global, pipeline_, overrides_);
  const Pipeline& p = opened.pipeline;
  fmt::print("wscsl: exporting {} to {}\n", p.dataset->label(), out_.string());
  export_dataset(*p.dataset, out_, stdout);
  return 0;
}

}  // namespace wscsl::host
