#include "sce_attention.hpp"

#include "wscsl/config/limits.hpp"
#include "wscsl/nn/distances.hpp"

namespace wscsl::sce_attention {

Schema<SceAttentionOptions> SceAttention::schema() {
  using O = SceAttentionOptions;
  Schema<O> s(
      "SCE-Net (Tan et al., ICCV 2019): masked embeddings ψ_k = φ ⊙ m_k and a condition-weight "
      "branch on the triplet, fused embedding E = Σ_k w_k ψ_k, F.pairwise_distance between fused "
      "embeddings.");
  s.field("input_dim", &O::input_dim, "D, the size of φ (set from the backbone).")
      .min(1)
      .derived(facts::backbone_embedding_dim);
  s.field("num_embeddings", &O::num_embeddings,
          "K, the number of masks (`num_concepts`; default: the dataset's number of conditions).")
      .min(1)
      .max(kMaxEmbeddings)
      .default_from(facts::dataset_num_conditions);
  s.field("masks", &O::masks, nn::mask_init_doc() + " The README's training command uses learned.",
          nn::mask_init_choices());
  s.field("hidden", &O::hidden, "Hidden units of the condition-weight branch (released: 32).")
      .min(1)
      .max(kMaxLayerSize);
  s.field("normalize", &O::normalize,
          "L2-normalise each ψ_k and each branch input as v/(‖v‖+1e-10) (released code); false "
          "gives the paper's Eq. 1, 2 and 9 without normalisation.");
  return s;
}

Contract SceAttention::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::AuxTerm, "mask_l1"}};
  return c;
}

SceAttention::SceAttention(const Options& options) : options_(options), d_(options.input_dim) {
  const std::int64_t k = options.num_embeddings;
  masks_ = register_module("masks", std::make_shared<nn::ConditionMasks>(k, d_, options.masks));
  hidden_ = register_module("branch_hidden", torch::nn::Linear(3 * d_, options.hidden));
  logits_ = register_module("branch_out", torch::nn::Linear(options.hidden, k));
}

torch::Tensor SceAttention::maybe_normalize(const torch::Tensor& v) const {
  return options_.normalize ? nn::normalize_offset(v, -1) : v;
}

torch::Tensor SceAttention::embed_impl(const torch::Tensor& phi) {
  return maybe_normalize(masks_->apply(phi));
}

torch::Tensor SceAttention::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return nn::pairwise_distance(psi_a, psi_b);
}

torch::Tensor SceAttention::condition_weights(const torch::Tensor& phi_anchor,
                                              const torch::Tensor& phi_close,
                                              const torch::Tensor& phi_far) {
  const torch::Tensor input = torch::cat(
      {maybe_normalize(phi_anchor), maybe_normalize(phi_far), maybe_normalize(phi_close)}, 1);
  return torch::softmax(logits_->forward(torch::relu(hidden_->forward(input))), 1);
}

TripletScores SceAttention::score_impl(const TripletInput& in) {
  TripletScores s;
  s.weights = condition_weights(in.phi_anchor, in.phi_close, in.phi_far);
  const torch::Tensor w = s.weights.unsqueeze(2);
  auto fuse = [&](const torch::Tensor& psi) { return (w * psi).sum(1); };
  const torch::Tensor anchor = fuse(in.psi_anchor);
  s.close_distances = distances(in.psi_anchor, in.psi_close);
  s.far_distances = distances(in.psi_anchor, in.psi_far);
  s.fused_close = nn::pairwise_distance(anchor, fuse(in.psi_close));
  s.fused_far = nn::pairwise_distance(anchor, fuse(in.psi_far));
  // The reference accumulates every mask's L1 norm over the batch and divides by K.
  s.aux["mask_l1"] = masks_->l1_norms().mean().expand({in.phi_anchor.size(0)});
  return s;
}

}  // namespace wscsl::sce_attention

WSCSL_PLUGIN(sce_attention, "0.1.0",
             "SCE-Net masks with a condition-weight branch (Tan et al., ICCV 2019)") {
  registrar.add<wscsl::ConditionModule, wscsl::sce_attention::SceAttention>("sce_attention");
}
