#include "gated_explainer.hpp"

#include <wscsl/nn/scoring.hpp>

namespace gated {

wscsl::Schema<GatedExplainerOptions> GatedExplainer::schema() {
  using O = GatedExplainerOptions;
  wscsl::Schema<O> s(
      "Soft gates per condition, ψ_k = normalize(φ ⊙ σ(G_k)); a triplet weighs each embedding by "
      "softmax(β·(d_far − d_close)), i.e. by how well that embedding explains it.");
  s.field("input_dim", &O::input_dim, "D, the size of φ (set from the backbone).")
      .min(1)
      .derived(wscsl::facts::backbone_embedding_dim);
  s.field("num_embeddings", &O::num_embeddings, "K (default: the dataset's conditions).")
      .min(1)
      .default_from(wscsl::facts::dataset_num_conditions);
  s.field("sharpness", &O::sharpness, "β: how strongly the best explanation wins.").min(0.0);
  s.field("gate_init_std", &O::gate_init_std, "Standard deviation of the initial gate logits.")
      .min(0.0);
  s.field("distance", &O::distance, "d_k, the distance under each embedding.",
          wscsl::EnumChoices<Distance>{{Distance::Euclidean, "euclidean", "‖ψ_k(a) − ψ_k(b)‖₂"},
                                       {Distance::Cosine, "cosine", "1 − cos(ψ_k(a), ψ_k(b))"}});
  return s;
}

GatedExplainer::GatedExplainer(const Options& options)
    : options_(options), d_(options.input_dim), k_(options.num_embeddings) {
  gates_ = register_parameter("gates", torch::randn({k_, d_}) * options.gate_init_std);
}

torch::Tensor GatedExplainer::embed_impl(const wscsl::EmbedInput& input) {
  const torch::Tensor gated = input.phi.unsqueeze(1) * torch::sigmoid(gates_).unsqueeze(0);
  return gated / gated.norm(2, {-1}, true).clamp_min(1e-12);
}

torch::Tensor GatedExplainer::distances_impl(const torch::Tensor& psi_a,
                                             const torch::Tensor& psi_b) {
  switch (options_.distance) {
    case Distance::Euclidean:
      return (psi_a - psi_b).norm(2, {-1});
    case Distance::Cosine:
      return 1 - torch::cosine_similarity(psi_a, psi_b, -1);
  }
  throw wscsl::Error("gated_explainer: unknown distance");
}

wscsl::ComparisonScores GatedExplainer::score_impl(const wscsl::ItemBlocks& items,
                                                   const wscsl::Comparisons& comparisons) {
  const wscsl::ComparedItems in = wscsl::gather(items, comparisons);
  const torch::Tensor close = distances(in.first.psi, in.second.psi);
  const torch::Tensor far = distances(in.first.psi, in.third.psi);
  const torch::Tensor weights = torch::softmax(options_.sharpness * (far - close), 1);
  return wscsl::nn::expected_distances(close, far, weights);
}

}  // namespace gated

WSCSL_PLUGIN(gated_explainer, "1.0.0", "Example third-party condition module: soft gates") {
  registrar.add<wscsl::ConditionModule, gated::GatedExplainer>("gated_explainer");
}
