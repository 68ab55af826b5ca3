#include "eval_command.hpp"

#include "evaluation/run_evaluation.hpp"
#include "rank_job.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {

EvalCommand::EvalCommand(CLI::App& app)
    : Command(app, "eval", "Evaluate a trained run (its best checkpoint) or one checkpoint") {
  CLI::App& c = subcommand();
  c.add_option("target", target_, "Run directory or checkpoint file")->required();
  c.add_option("--set", overrides_, "Override a pipeline key, e.g. an evaluator option");
  nproc_.add_to(c);
}

int EvalCommand::run(const Invocation& invocation) {
  if (nproc_.starts_processes(invocation.world)) return nproc_.launch(invocation);
  const auto [run, checkpoint] = run_and_checkpoint(target_);
  RankJob job(invocation.global, invocation.world, JobWork::Embedding, run.resolved(), overrides_);
  job.join();
  job.lock(run);
  return job.run([&] {
    const auto result =
        evaluate_run(job.pipeline(), job.strategy(), run, job.is_root() ? checkpoint : fs::path());
    if (result) print_evaluation(*result, run);
    return 0;
  });
}

}  // namespace wscsl::host
