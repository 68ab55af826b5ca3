#include "probe.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#include <chrono>
#include <mutex>

#include <fmt/format.h>

#include "item_forward.hpp"
#include "wscsl/nn/device.hpp"
#include "wscsl/util/clock.hpp"
#include "wscsl/util/tensor_text.hpp"

namespace wscsl::host {
namespace {

// Puts back what running the components changes: the buffers (batch-norm statistics move in
// training mode), the training mode, and LibTorch's global random state (dropout draws from it),
// so that a run trained after a probe is the run trained without one.
class Restorer {
 public:
  explicit Restorer(torch::nn::Module& model) : model_(model), training_(model.is_training()) {
    torch::NoGradGuard no_grad;
    for (const torch::Tensor& b : model.buffers())
      buffers_.push_back(b.clone());
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    random_state_ = generator.get_state();
  }
  ~Restorer() {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> buffers = model_.buffers();
    for (std::size_t i = 0; i < buffers.size() && i < buffers_.size(); ++i)
      buffers[i].copy_(buffers_[i]);
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(random_state_);
    model_.train(training_);
  }
  Restorer(const Restorer&) = delete;
  Restorer& operator=(const Restorer&) = delete;

 private:
  torch::nn::Module& model_;
  bool training_;
  std::vector<torch::Tensor> buffers_;
  torch::Tensor random_state_;
};

class Prober {
 public:
  Prober(const Pipeline& pipeline, const std::set<Kind>& skip)
      : p_(pipeline),
        model_(pipeline.model()),
        device_(nn::device_of(*model_)),
        info_(pipeline.dataset->info()),
        run_backbone_(!skip.count(Kind::Backbone)),
        run_module_(!skip.count(Kind::ConditionModule)) {}

  std::vector<std::string> run() {
    const Restorer restorer(*model_);
    const TripletImages roles{made_up({kProbeTriplets, info_.channels, info_.height, info_.width}),
                              made_up({kProbeTriplets, info_.channels, info_.height, info_.width}),
                              made_up({kProbeTriplets, info_.channels, info_.height, info_.width})};
    const TripletTexts texts = made_up_texts();
    const Embedders embedders{
        [&](const torch::Tensor& images, bool with_map) { return phi_of(images, with_map); },
        [&](const EmbedInput& input) { return psi_of(input); }};
    model_->train();
    {
      const ForwardTriplets triplets = forward_triplets(p_, roles, texts, conditions(), embedders);
      note("φ", triplets.items.by_row().phi, run_backbone_);
      note("ψ", triplets.items.by_row().psi, run_module_);
      const ScoredTriplets scored = scores(triplets);
      note("weights", scored.scores.weights, run_module_);
      weighted_loss(p_, triplets, scored, roles);
      for (const WeightedLoss& l : p_.losses)
        ran_.push_back(fmt::format("loss '{}'", l.name));
    }
    // What the evaluators read, in evaluation mode: the items of a table (each embedded once) and
    // the scores of triplets, and of pairs where the module scores them, among its rows.
    model_->eval();
    torch::NoGradGuard no_grad;
    const ItemFeatures items = forward_items(p_, {{roles.anchor, texts.anchor}}, embedders);
    const torch::Tensor rows = torch::arange(kProbeTriplets, long_options());
    Comparisons rolled{rows,
                       (rows + kProbeTriplets - 1).remainder(kProbeTriplets),
                       (rows + kProbeTriplets - 2).remainder(kProbeTriplets),
                       conditions(),
                       {},
                       {}};
    if (run_module_) {
      if (p_.condition_module->contract().provides_resource(Resource::AttentionMaps, ""))
        note("attention maps",
             p_.condition_module->attention_maps(embed_input(p_, roles.anchor, embedders)), true);
      p_.condition_module->score(items, rolled);
      if (p_.condition_module->contract().provides_resource(Resource::PairScores, ""))
        p_.condition_module->score(
            items, Comparisons{rolled.first, rolled.second, {}, rolled.conditions, {}, {}});
    }
    if (run_backbone_ || run_module_) ran_.push_back("the evaluators' inputs");
    return ran_;
  }

 private:
  torch::TensorOptions long_options() const {
    return torch::TensorOptions(device_).dtype(torch::kLong);
  }

  torch::Tensor made_up(std::vector<std::int64_t> shape) {
    return torch::rand(shape, rng_).to(device_);
  }

  BackboneOutput phi_of(const torch::Tensor& images, bool with_map) {
    if (run_backbone_)
      return with_map ? p_.backbone->embed_with_map(images)
                      : BackboneOutput{p_.backbone->embed(images), {}};
    const Backbone& b = *p_.backbone;
    // A skipped backbone's map: any spatial size does; 7 × 7 is a ResNet's at 224 pixels.
    return {made_up({images.size(0), b.embedding_dim()}),
            with_map ? made_up({images.size(0), b.feature_map_channels(), 7, 7}) : torch::Tensor()};
  }

  torch::Tensor psi_of(const EmbedInput& input) {
    const ConditionModule& m = *p_.condition_module;
    return run_module_ ? p_.condition_module->embed(input)
                       : made_up({input.phi.size(0), m.num_embeddings(), m.output_dim()});
  }

  // The triplets' conditions, for a module that trains with them.
  torch::Tensor conditions() const {
    if (p_.condition_module->supervision() != Supervision::Conditioned) return {};
    return torch::arange(kProbeTriplets, long_options())
        .remainder(std::max<std::int64_t>(1, info_.num_conditions()));
  }

  // Texts for every field a text encoder reads: words, and an item without text in each role.
  TripletTexts made_up_texts() const {
    TripletTexts texts;
    for (const NamedTextEncoder& t : p_.text_encoders) {
      if (texts.anchor.count(t.field)) continue;
      for (std::int64_t i = 0; i < kProbeTriplets; ++i) {
        const auto text = [&](std::int64_t role) {
          return i == role ? std::string() : fmt::format("probe text {} {}", role, i);
        };
        texts.anchor[t.field].push_back(text(0));
        texts.close[t.field].push_back(text(1));
        texts.far[t.field].push_back(text(2));
      }
    }
    return texts;
  }

  ScoredTriplets scores(const ForwardTriplets& triplets) {
    if (run_module_) return score_triplets(p_, triplets);
    ScoredTriplets scored{made_up_scores(), std::nullopt};
    if (p_.losses_need(Resource::ReversedScores)) scored.reversed = made_up_scores();
    return scored;
  }

  // Scores of the shapes a condition module declares, with its aux terms.
  ComparisonScores made_up_scores() {
    const std::int64_t k = p_.condition_module->num_embeddings();
    ComparisonScores s;
    s.second_distances = made_up({kProbeTriplets, k});
    s.third_distances = made_up({kProbeTriplets, k});
    s.weights = torch::softmax(made_up({kProbeTriplets, k}), 1);
    s.fused_second = (s.weights * s.second_distances).sum(1);
    s.fused_third = (s.weights * s.third_distances).sum(1);
    for (const std::string& name :
         p_.condition_module->contract().provided_names(Resource::AuxTerm))
      s.aux[name] = made_up({kProbeTriplets});
    return s;
  }

  void note(const std::string& what, const torch::Tensor& t, bool ran) {
    ran_.push_back(ran ? fmt::format("{} {}", what, dtype_and_shape_of(t))
                       : fmt::format("{} skipped (random {})", what, shape_of(t)));
  }

  const Pipeline& p_;
  std::shared_ptr<torch::nn::Module> model_;
  torch::Device device_;
  DatasetInfo info_;
  bool run_backbone_, run_module_;
  // Its own generator: the inputs leave the run's random stream as it was.
  torch::Generator rng_ = at::detail::createCPUGenerator(0);
  std::vector<std::string> ran_;
};

}  // namespace

ProbeReport probe_pipeline(const Pipeline& pipeline, const std::set<Kind>& skip) {
  const auto start = std::chrono::steady_clock::now();
  ProbeReport report;
  report.ran = Prober(pipeline, skip).run();
  report.milliseconds = milliseconds_since(start);
  return report;
}

}  // namespace wscsl::host
