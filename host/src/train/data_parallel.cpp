#include "data_parallel.hpp"

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "distributed/launchers.hpp"
#include "evaluation/run_evaluation.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"

namespace wscsl::host {
namespace {

// A step's loss and its terms shared by the processes: the whole batch's, and whether any
// process was asked to stop, travel while backward runs, so that every process then decides
// alike.
class SharedLoss : public LossSharing {
 public:
  SharedLoss(const Communicator& comm, GradientAverager& averager, const Shard& share,
             const std::function<bool()>& stop_requested)
      : comm_(comm), averager_(averager), share_(share), stop_requested_(stop_requested) {}

  torch::Tensor before_backward(const torch::Tensor& loss, const torch::Tensor& terms) override {
    const double fraction = share_.fraction();
    sums_ =
        torch::cat({torch::tensor({loss.item<double>() * fraction, stop_requested_() ? 1.0 : 0.0},
                                  torch::kDouble),
                    terms * fraction});
    wait_for_sums_ = comm_.start_sum(sums_);
    // Averaging then weighs each process's mean by its share of the batch.
    const torch::Tensor weighted = loss * (fraction * comm_.size());
    averager_.prepare(weighted);
    return weighted;
  }

  BatchLoss after_backward() override {
    wait_for_sums_();
    const double* sums = sums_.data_ptr<double>();
    return {sums[0], std::vector<double>(sums + 2, sums + sums_.size(0))};
  }

  bool any_stop_requested() const { return sums_[1].item<double>() > 0; }

 private:
  const Communicator& comm_;
  GradientAverager& averager_;
  Shard share_;
  const std::function<bool()>& stop_requested_;
  torch::Tensor sums_;  // the batch's loss, the processes asked to stop, the loss's terms
  std::function<void()> wait_for_sums_;
};

}  // namespace

DataParallel::DataParallel(const Strategy& strategy, TrainingModel& model,
                           std::int64_t smallest_batch, bool sync_batch_norm)
    : strategy_(strategy), model_(model) {
  const Communicator& comm = strategy.comm();
  if (smallest_batch < comm.size())
    throw Error(fmt::format(
        "the last batch of an epoch holds {} triplet{}, fewer than the {} processes that share "
        "it (set trainer.drop_last = true)",
        smallest_batch, smallest_batch == 1 ? "" : "s", comm.size()));
  comm.broadcast(model_state(model.module()));
  averager_ = comm.gradient_averager(model.parameters(), model.parameter_names());
  // Alone, batch norm keeps LibTorch's own computation, bit for bit.
  if (sync_batch_norm && comm.size() > 1)
    synchronised_.emplace([this](at::Tensor& t) { strategy_.comm().sum(t); });
}

StepOutcome DataParallel::step(TrainingStep& training_step, const TripletBatch& batch,
                               const Shard& share, const std::function<bool()>& stop_requested) {
  SharedLoss shared(strategy_.comm(), *averager_, share, stop_requested);
  StepLosses losses = training_step.take(batch, shared);
  return {std::move(losses), shared.any_stop_requested()};
}

StepOutcome DataParallel::naming_failures(const TrainingState& at,
                                          const std::function<StepOutcome()>& take_step) const {
  if (strategy_.processes() == 1) return take_step();
  try {
    return take_step();
  } catch (const std::exception& e) {
    throw CollectiveError(
        strategy_.rank(),
        fmt::format("step {} (epoch {}) failed: {}", at.global_step + 1, at.epoch + 1, e.what()));
  }
}

std::optional<EvaluationResult> DataParallel::validate(Pipeline& pipeline) {
  strategy_.comm().broadcast(model_.module().buffers());
  const EmbeddingTable val =
      embed_split(pipeline, Split::Val, pipeline.trainer.eval_batch_size, strategy_);
  if (!strategy_.is_root()) return std::nullopt;
  return evaluate(pipeline, val, val, false, {});
}

std::optional<EvaluationResult> DataParallel::final_evaluation(Pipeline& pipeline,
                                                               const RunDirectory& run) const {
  return evaluate_run(
      pipeline, strategy_, run,
      strategy_.is_root() ? checkpoint_for_evaluation(run) : std::filesystem::path());
}

void DataParallel::check_replicas(std::int64_t epoch, RunWriter& writer) const {
  if (strategy_.processes() == 1) return;
  std::string bytes;
  for (const torch::Tensor& p : model_.parameters()) {
    const torch::Tensor host = p.detach().to(torch::kCPU).contiguous();
    bytes.append(static_cast<const char*>(host.data_ptr()), host.nbytes());
  }
  const std::string digest = sha256_hex(bytes);
  const torch::Tensor mine =
      torch::from_blob(const_cast<char*>(digest.data()),
                       {1, static_cast<std::int64_t>(digest.size())}, torch::kUInt8)
          .clone();
  const torch::Tensor all = strategy_.comm().gather_rows(mine);
  std::vector<std::string> digests;
  for (std::int64_t r = 0; r < all.size(0); ++r)
    digests.emplace_back(reinterpret_cast<const char*>(all[r].contiguous().data_ptr()),
                         static_cast<std::size_t>(all.size(1)));
  writer.log_replicas(epoch + 1, digests);
  for (std::size_t r = 1; r < digests.size(); ++r)
    if (digests[r] != digests[0])
      throw Error(
          fmt::format("the parameters of rank {} differ from those of rank 0 after epoch {}; the "
                      "processes no longer train one model",
                      r, epoch + 1));
}

std::string DataParallel::resume_command(const std::string& run) const {
  return host::resume_command(strategy_.comm().world(), run);
}

}  // namespace wscsl::host
