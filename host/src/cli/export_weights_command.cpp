#include "export_weights_command.hpp"

#include <fmt/format.h>

#include "distributed/placement.hpp"
#include "evaluation/run_evaluation.hpp"
#include "pipeline/pipeline.hpp"
#include "run/checkpoint.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/util/tensor_text.hpp"

namespace wscsl::host {

ExportWeightsCommand::ExportWeightsCommand(CLI::App& app)
    : Command(app, "export-weights",
              "Write a run's trained weights (its best checkpoint) as a state dict torch.load "
              "reads") {
  CLI::App& c = subcommand();
  c.add_option("target", target_, "Run directory or checkpoint file")->required();
  c.add_option("--out", output_, "Output file (.pt)")->required();
  c.add_flag("--list", list_, "Print every tensor's name and shape");
}

int ExportWeightsCommand::run(const Invocation& invocation) {
  const auto [run, checkpoint] = run_and_checkpoint(target_);
  const RunLock lock(run);
  // Copying tensors out needs no GPU, whichever device the run trained on.
  const Placement cpu;
  OpenPipeline opened =
      open_pipeline_on(invocation.global, run.resolved(), DeviceSetting{DeviceKind::Cpu, -1},
                       "wscsl export-weights (on the CPU)");
  auto model = opened.pipeline.model();
  load_checkpoint(checkpoint, *model, nullptr, false, cpu.device);
  nn::StateDict tensors;
  for (const auto& p : model->named_parameters())
    tensors.emplace_back(p.key(), p.value());
  for (const auto& b : model->named_buffers())
    tensors.emplace_back(b.key(), b.value());
  nn::write_state_dict(output_, tensors);
  if (list_)
    for (const auto& [name, tensor] : tensors)
      fmt::print("  {} {}\n", name, shape_of(tensor));
  fmt::print("{} tensors of {} written to {} (Python: torch.load(\"{}\"))\n", tensors.size(),
             checkpoint.string(), output_.string(), output_.string());
  return 0;
}

}  // namespace wscsl::host
