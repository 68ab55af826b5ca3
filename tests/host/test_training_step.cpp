// The training step alone (host/src/train/training_step.hpp), and the data parallelism around it
// (host/src/train/data_parallel.hpp) in a world of one process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <torch/autograd.h>

#include "built_pipeline.hpp"
#include "distributed/strategy.hpp"
#include "pipelines.hpp"
#include "train/autocast_scope.hpp"
#include "train/data_parallel.hpp"
#include "train/training_data.hpp"
#include "train/training_model.hpp"
#include "train/training_step.hpp"
#include "unshared_loss.hpp"

using namespace wscsl;
using namespace wscsl::host;

namespace {

constexpr double kLr = 0.01;  // the tiny pipeline's

// The tiny pipeline with plain SGD: a step moves each parameter by -lr times its gradient. Every
// build initialises the same parameters (the pipeline's seed). `trainer` adds [trainer] lines.
Pipeline tiny_sgd(const std::string& trainer = "") {
  const std::string text =
      test::tiny_pipeline() + "optimizer = \"sgd\"\nmomentum = 0.0\n" + trainer;
  return test::built_pipeline(text);
}

// The first batch of the first epoch, whole, on `device`.
TripletBatch first_batch(const Pipeline& pipeline, torch::Device device) {
  Placement placement;
  placement.device = device;
  TrainingData data(pipeline, placement, 0);
  data.start_epoch(0);
  return data.batch(0, 0).batch;
}

// Differentiates `factor` times the loss and reports `reported` as the batch's loss.
class Rescaled : public LossSharing {
 public:
  Rescaled(double factor, double reported) : factor_(factor), reported_(reported) {}
  torch::Tensor before_backward(const torch::Tensor& loss, const torch::Tensor&) override {
    return loss * factor_;
  }
  BatchLoss after_backward() override { return {reported_, {}}; }

 private:
  double factor_, reported_;
};

// The components' features of `batch`'s items (anchors, then close, then far items) and its
// triplets among them, computed here from their interfaces.
struct ByHand {
  ItemBlocks items;
  Comparisons triplets;
};
ByHand input_by_hand(const Pipeline& p, const TripletBatch& batch) {
  std::vector<ItemFeatures> roles(3);
  const std::vector<torch::Tensor> images = {batch.images.anchor, batch.images.close,
                                             batch.images.far};
  for (std::size_t r = 0; r < roles.size(); ++r)
    roles[r].phi = p.backbone->embed(images[r]);
  for (ItemFeatures& role : roles)
    role.psi = p.condition_module->embed(role.phi);
  const std::int64_t b = batch.images.anchor.size(0);
  const torch::Tensor rows = torch::arange(b, torch::kLong);
  ByHand in{ItemFeatures::concatenated(roles),
            Comparisons{rows, rows + b, rows + 2 * b, batch.conditions, {}, {}}};
  return in;
}

// The pipeline's weighted loss of `batch`, computed here from the components' interfaces.
torch::Tensor loss_by_hand(const Pipeline& p, const TripletBatch& batch) {
  const ByHand in = input_by_hand(p, batch);
  const ComparisonScores scores = p.condition_module->score(in.items, in.triplets);
  torch::Tensor total;
  for (const WeightedLoss& l : p.losses)
    for (const auto& [name, term] : l.loss->compute(LossInput{in.items, in.triplets, scores}))
      total = total.defined() ? total + term * l.weight : term * l.weight;
  return total;
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : tensors)
    out.push_back(t.detach().clone());
  return out;
}

// The gradient of `loss` with respect to each of `parameters` (zero for one it does not reach).
std::vector<torch::Tensor> gradients_of(const torch::Tensor& loss,
                                        const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> gradients =
      torch::autograd::grad({loss}, parameters, {}, /*retain_graph=*/false,
                            /*create_graph=*/false, /*allow_unused=*/true);
  for (std::size_t i = 0; i < gradients.size(); ++i)
    if (!gradients[i].defined()) gradients[i] = torch::zeros_like(parameters[i]);
  return gradients;
}

// Expects `after` to be `before` moved by -rates[i] · `gradients` for each parameter i; returns
// how many parameters moved. The update may differ from that by float32 rounding: backward
// through batch norm subtracts means, and a scaled loss rounds differently there (measured: 1e-4
// of the update; a wrong rate or factor is off by its whole size).
std::size_t expect_sgd_step_at(const std::vector<torch::Tensor>& before,
                               const std::vector<torch::Tensor>& gradients,
                               const std::vector<torch::Tensor>& after,
                               const std::vector<double>& rates) {
  std::size_t moved = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const torch::Tensor expected = -rates[i] * gradients[i];
    const double scale = expected.abs().max().item<double>();
    const double difference = (after[i] - before[i] - expected).abs().max().item<double>();
    EXPECT_LE(difference, 1e-3 * scale) << "parameter " << i;
    if (!torch::equal(after[i], before[i])) ++moved;
  }
  return moved;
}

// Expects every parameter moved by -kLr · `factor` · its gradient (expect_sgd_step_at).
std::size_t expect_sgd_step(const std::vector<torch::Tensor>& before,
                            const std::vector<torch::Tensor>& gradients,
                            const std::vector<torch::Tensor>& after, double factor) {
  return expect_sgd_step_at(before, gradients, after,
                            std::vector<double>(before.size(), kLr * factor));
}

}  // namespace

TEST(TrainingStep, DescendsTheGradientOfThePipelinesWeightedLoss) {
  const Pipeline p = tiny_sgd();
  TrainingModel model(p, resolve_device(p.trainer.device));
  const TripletBatch batch = first_batch(p, model.device());
  model.module().train();
  // Batch norm normalises a training batch by its own statistics: the forward pass here and the
  // step's see the same values.
  const torch::Tensor expected = loss_by_hand(p, batch);
  const double expected_value = expected.item<double>();
  const std::vector<torch::Tensor> gradients = gradients_of(expected, model.parameters());
  const std::vector<torch::Tensor> before = copies(model.parameters());
  TrainingStep step(p, model.optimizer(), p.trainer.precision);
  test::UnsharedLoss alone;
  EXPECT_EQ(step.take(batch, alone).total, expected_value);
  EXPECT_GT(expect_sgd_step(before, gradients, copies(model.parameters()), 1.0), 0u);
}

// [[trainer.parameter_groups]]: one SGD step moves the condition module's parameters by −0.5·g
// and the others by −trainer.lr·g (0.01), 50 times less.
TEST(TrainingStep, EachParameterGroupDescendsAtItsOwnLearningRate) {
  const Pipeline p =
      tiny_sgd("\n[[trainer.parameter_groups]]\nprefixes = [\"condition_module\"]\nlr = 0.5\n");
  TrainingModel model(p, resolve_device(p.trainer.device));
  ASSERT_EQ(model.optimizer().param_groups().size(), 2u);
  const TripletBatch batch = first_batch(p, model.device());
  model.module().train();
  const std::vector<torch::Tensor> gradients =
      gradients_of(loss_by_hand(p, batch), model.parameters());
  const std::vector<torch::Tensor> before = copies(model.parameters());
  std::vector<double> rates;
  std::size_t in_group = 0;
  for (const std::string& name : model.parameter_names()) {
    const bool grouped = name.rfind("condition_module.", 0) == 0;
    in_group += grouped;
    rates.push_back(grouped ? 0.5 : kLr);
  }
  ASSERT_GT(in_group, 0u);
  ASSERT_LT(in_group, rates.size());
  TrainingStep step(p, model.optimizer(), p.trainer.precision);
  test::UnsharedLoss alone;
  step.take(batch, alone);
  EXPECT_GT(expect_sgd_step_at(before, gradients, copies(model.parameters()), rates), in_group);
}

// The schedule scales every group's rate alike: lr·gamma^⌊epoch/step_size⌋ of each group's own.
TEST(TrainingModel, TheScheduleScalesEachGroupsOwnRate) {
  const Pipeline p = tiny_sgd(
      "lr_schedule = \"step\"\nstep_size = 1\ngamma = 0.5\n\n[[trainer.parameter_groups]]\n"
      "prefixes = [\"backbone\"]\nlr = 0.25\n");
  TrainingModel model(p, resolve_device(p.trainer.device));
  auto& groups = model.optimizer().param_groups();
  ASSERT_EQ(groups.size(), 2u);
  for (const std::int64_t epoch : {0, 1, 3}) {
    model.set_epoch(epoch);
    const double factor = std::pow(0.5, static_cast<double>(epoch));
    EXPECT_EQ(groups[0].options().get_lr(), kLr * factor) << "epoch " << epoch;
    EXPECT_EQ(groups[1].options().get_lr(), 0.25 * factor) << "epoch " << epoch;
  }
  // The backbone's parameters, and only those, are in the second group.
  std::size_t backbone = 0;
  for (const std::string& name : model.parameter_names())
    backbone += name.rfind("backbone.", 0) == 0;
  EXPECT_EQ(groups[1].params().size(), backbone);
  EXPECT_EQ(groups[0].params().size() + groups[1].params().size(), model.parameters().size());
}

// Each loss's terms come out unweighted under "<loss name>/<term>", and the loss is their weighted
// sum (up to float32 rounding of that sum: a few ulp of the largest term).
TEST(TrainingStep, ReportsEachLossTermUnweightedUnderItsLossName) {
  const Pipeline single = tiny_sgd();
  TrainingModel single_model(single, resolve_device(single.trainer.device));
  const std::string text = test::tiny_pipeline() +
                           "optimizer = \"sgd\"\nmomentum = 0.0\n\n[[losses]]\nname = \"wide\"\n"
                           "type = \"margin\"\nmargin = 0.5\nweight = 0.25\n";
  const Pipeline two = test::built_pipeline(text);
  TrainingModel two_model(two, resolve_device(two.trainer.device));
  const TripletBatch batch = first_batch(single, single_model.device());
  test::UnsharedLoss alone, alone_too;
  const StepLosses reference =
      TrainingStep(single, single_model.optimizer(), single.trainer.precision).take(batch, alone);
  const StepLosses both =
      TrainingStep(two, two_model.optimizer(), two.trainer.precision).take(batch, alone_too);
  ASSERT_EQ(both.terms.size(), 2u);
  EXPECT_EQ(both.terms[0].first, "margin/margin");
  EXPECT_EQ(both.terms[1].first, "wide/margin");
  // The same parameters (the seed) and batch: the first loss is the single pipeline's whole loss.
  EXPECT_EQ(both.terms[0].second, reference.total);
  EXPECT_GT(both.terms[1].second, both.terms[0].second);  // a wider margin hinges more
  const double largest = std::max(both.terms[0].second, 0.25 * both.terms[1].second);
  EXPECT_NEAR(both.total, both.terms[0].second + 0.25 * both.terms[1].second,
              4 * std::numeric_limits<float>::epsilon() * largest);
}

TEST(AutocastScope, MultipliesInBfloat16InsideTheScopeOnly) {
  const torch::Tensor a = torch::rand({4, 4});
  {
    const AutocastScope autocast(torch::kCPU);
    EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kBFloat16);
    { const AutocastScope nested(torch::kCPU); }
    EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kBFloat16) << "a nested scope ended it";
  }
  EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kFloat);
}

// trainer.precision = "bf16-mixed" on the CPU (LibTorch's CPU autocast): the forward's products
// run in bfloat16, so the loss differs from the float32 step's on the same parameters and batch —
// but by no more than bfloat16's rounding allows. Each product on a distance's path rounds its two
// inputs to bfloat16 (unit roundoff u = 2^-8): the backbone's two convolutions and linear layer
// and the condition module's projection (4), and the set module's two layers behind the weights
// that mix the distances (2). To first order a distance, or a weight, moves by at most 2u of its
// size per product, the fused distance Σ_k p_k d_k by at most 2·(4 + 2)·u of itself, and the
// margin hinge, 1-Lipschitz in each fused distance, moves the mean loss by at most
// 12u · mean(d_close + d_far). Weights, gradients and the reported loss stay float32.
TEST(TrainingStep, Bf16MixedStaysWithinBfloat16RoundingOfTheFloat32StepAndKeepsFloat32Weights) {
  const Pipeline float32 = tiny_sgd();
  const Pipeline bf16 = tiny_sgd("precision = \"bf16-mixed\"\n");
  ASSERT_EQ(bf16.trainer.precision, Precision::Bf16Mixed);
  TrainingModel float32_model(float32, resolve_device(float32.trainer.device));
  TrainingModel bf16_model(bf16, resolve_device(bf16.trainer.device));
  const TripletBatch batch = first_batch(float32, float32_model.device());
  float32_model.module().train();
  const ByHand in = input_by_hand(float32, batch);
  const ComparisonScores scores = float32.condition_module->score(in.items, in.triplets);
  const double distances = (scores.fused_second + scores.fused_third).mean().item<double>();
  const std::vector<torch::Tensor> before = copies(bf16_model.parameters());
  test::UnsharedLoss alone, alone_too;
  const double float32_loss =
      TrainingStep(float32, float32_model.optimizer(), float32.trainer.precision)
          .take(batch, alone)
          .total;
  const double bf16_loss = TrainingStep(bf16, bf16_model.optimizer(), bf16.trainer.precision)
                               .take(batch, alone_too)
                               .total;
  EXPECT_NE(bf16_loss, float32_loss) << "the forward did not run under bfloat16 autocast";
  EXPECT_LE(std::abs(bf16_loss - float32_loss), 12.0 * std::pow(2.0, -8) * distances);
  std::size_t moved = 0;
  const std::vector<torch::Tensor> after = copies(bf16_model.parameters());
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].scalar_type(), torch::kFloat) << "parameter " << i;
    if (!torch::equal(after[i], before[i])) ++moved;
  }
  EXPECT_GT(moved, 0u);
}

TEST(TrainingStep, DifferentiatesTheLossItsSharingReturnsAndReportsTheBatchLossItGives) {
  const Pipeline p = tiny_sgd();
  TrainingModel model(p, resolve_device(p.trainer.device));
  const TripletBatch batch = first_batch(p, model.device());
  model.module().train();
  const std::vector<torch::Tensor> gradients =
      gradients_of(loss_by_hand(p, batch), model.parameters());
  const std::vector<torch::Tensor> before = copies(model.parameters());
  TrainingStep step(p, model.optimizer(), p.trainer.precision);
  Rescaled tripled(3.0, 0.25);
  EXPECT_EQ(step.take(batch, tripled).total, 0.25);
  EXPECT_GT(expect_sgd_step(before, gradients, copies(model.parameters()), 3.0), 0u);
}

TEST(TrainingStep, AStepWhoseBatchLossIsNotFiniteLeavesTheParametersAsTheyWere) {
  const Pipeline p = tiny_sgd();
  TrainingModel model(p, resolve_device(p.trainer.device));
  const TripletBatch batch = first_batch(p, model.device());
  const std::vector<torch::Tensor> before = copies(model.parameters());
  TrainingStep step(p, model.optimizer(), p.trainer.precision);
  Rescaled diverged(1.0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(step.take(batch, diverged).total));
  const std::vector<torch::Tensor> after = copies(model.parameters());
  for (std::size_t i = 0; i < before.size(); ++i)
    EXPECT_TRUE(torch::equal(after[i], before[i])) << "parameter " << i;
}

TEST(DataParallel, ShardsOfABatchTileItInRankOrder) {
  for (const int processes : {1, 2, 3, 5}) {
    std::int64_t next = 0;
    double fractions = 0.0;
    for (int rank = 0; rank < processes; ++rank) {
      const Shard share = Shard::of(7, rank, processes);
      EXPECT_EQ(share.first, next) << rank << " of " << processes;
      EXPECT_GE(share.last, share.first + 1) << rank << " of " << processes;
      EXPECT_EQ(share.total, 7);
      EXPECT_EQ(share.rank, rank);
      next = share.last;
      fractions += share.fraction();
    }
    EXPECT_EQ(next, 7) << processes << " processes";
    EXPECT_NEAR(fractions, 1.0, 1e-12) << processes << " processes";
  }
  EXPECT_EQ(Shard::of(32, 0, 1).fraction(), 1.0);
}

// Each process's training data reads its shard of a batch: the shards of the job's processes,
// one after another, are the batch one process reads alone, augmentation included.
TEST(DataParallel, TheProcessesShardsOfABatchAreTheWholeBatch) {
  const Pipeline pipeline = tiny_sgd();
  TrainingData alone(pipeline, Placement{}, 0);
  alone.start_epoch(0);
  const TripletBatch whole = alone.batch(0, 3).batch;
  Placement three;
  three.processes = 3;
  std::vector<torch::Tensor> anchors, fars;
  for (int rank = 0; rank < 3; ++rank) {
    TrainingData data(pipeline, three, rank);
    data.start_epoch(0);
    const auto [part, share] = data.batch(0, 3);
    EXPECT_EQ(share.total, whole.images.anchor.size(0));
    EXPECT_EQ(part.images.anchor.size(0), share.size()) << "rank " << rank;
    anchors.push_back(part.images.anchor);
    fars.push_back(part.images.far);
  }
  EXPECT_TRUE(torch::equal(torch::cat(anchors), whole.images.anchor));
  EXPECT_TRUE(torch::equal(torch::cat(fars), whole.images.far));
}

// The ids of this process's threads named `name`.
std::vector<std::string> threads_named(const std::string& name) {
  std::vector<std::string> ids;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ids.push_back(task.path().filename().string());
  }
  return ids;
}

// The nanoseconds thread `id` of this process has run on a core (its schedstat's first field).
std::uint64_t cpu_nanoseconds(const std::string& id) {
  std::ifstream schedstat("/proc/self/task/" + id + "/schedstat");
  std::uint64_t nanoseconds = 0;
  schedstat >> nanoseconds;
  return nanoseconds;
}

// A batch is read ahead on a background thread only where the step leaves that thread a core:
// beside a step that takes every core of the process its parallel regions would wait for one
// another (docs/benchmarks.md). Read ahead or not, the batches are the same, and every batch is
// read ahead on the same thread (one started per step would cost a thread's start each step).
TEST(DataParallel, ABatchIsReadAheadOnlyWhereTheStepLeavesACore) {
  const Pipeline pipeline = tiny_sgd();
  Placement placement;
  placement.cores = 2;
  placement.threads = 1;
  TrainingData ahead(pipeline, placement, 0);
  EXPECT_TRUE(ahead.reads_ahead());
  placement.threads = 2;
  TrainingData every_core(pipeline, placement, 0);
  EXPECT_FALSE(every_core.reads_ahead());
  placement.device = torch::Device(torch::kCUDA, 0);  // the step computes on the GPU
  EXPECT_TRUE(TrainingData(pipeline, placement, 0).reads_ahead());
  Pipeline asked_not = tiny_sgd();
  asked_not.trainer.read_ahead = false;
  EXPECT_FALSE(TrainingData(asked_not, placement, 0).reads_ahead());

  ASSERT_GE(ahead.steps_per_epoch(), 2);
  const std::vector<std::string> reader = threads_named("wscsl-read");
  ASSERT_EQ(reader.size(), 1u);
  const std::uint64_t idle = cpu_nanoseconds(reader[0]);
  for (std::int64_t epoch = 0; epoch < 2; ++epoch) {
    ahead.start_epoch(epoch);
    every_core.start_epoch(epoch);
    for (std::int64_t step = 0; step < ahead.steps_per_epoch(); ++step) {
      const std::int64_t global_step = epoch * ahead.steps_per_epoch() + step;
      const ShardBatch read_ahead = ahead.batch(step, global_step);
      const ShardBatch read_now = every_core.batch(step, global_step);
      EXPECT_TRUE(torch::equal(read_ahead.batch.images.anchor, read_now.batch.images.anchor));
      EXPECT_TRUE(torch::equal(read_ahead.batch.images.close, read_now.batch.images.close));
      EXPECT_EQ(read_ahead.share.total, read_now.share.total);
      // The first reader lives on (threads it starts, as LibTorch 2's pools, inherit its name).
      const std::vector<std::string> named = threads_named("wscsl-read");
      EXPECT_NE(std::find(named.begin(), named.end(), reader[0]), named.end())
          << "step " << global_step;
    }
  }
  EXPECT_GT(cpu_nanoseconds(reader[0]), idle) << "the batches were read on another thread";
}

// The trainer always steps through DataParallel: in a world of one process its collectives do
// nothing, and the step is the bare step's, bit for bit.
TEST(DataParallel, OneProcessTakesTheStepOfTheTrainingStepAloneBitForBit) {
  const Pipeline bare_pipeline = tiny_sgd();
  TrainingModel bare(bare_pipeline, resolve_device(bare_pipeline.trainer.device));
  TrainingStep bare_step(bare_pipeline, bare.optimizer(), bare_pipeline.trainer.precision);
  const Pipeline shared_pipeline = tiny_sgd();
  TrainingModel shared(shared_pipeline, resolve_device(shared_pipeline.trainer.device));
  TrainingStep shared_step(shared_pipeline, shared.optimizer(), shared_pipeline.trainer.precision);
  const Strategy one(shared_pipeline.trainer, World{});
  const TripletBatch batch = first_batch(bare_pipeline, bare.device());
  const std::int64_t size = batch.images.anchor.size(0);
  DataParallel parallel(one, shared, size, false);
  for (const bool stop : {false, true}) {
    test::UnsharedLoss alone;
    const StepLosses loss = bare_step.take(batch, alone);
    const StepOutcome outcome =
        parallel.step(shared_step, batch, one.shard(size), [&] { return stop; });
    EXPECT_EQ(outcome.losses.total, loss.total);
    EXPECT_EQ(outcome.losses.terms, loss.terms);
    EXPECT_EQ(outcome.stop_requested, stop);
    const std::vector<torch::Tensor> a = copies(bare.parameters());
    const std::vector<torch::Tensor> b = copies(shared.parameters());
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i << ", stop " << stop;
  }
}
