// DiscoverNet (Ye, Shi, Zhan, CVPR 2022): K projections ψ_k of φ, a function g that summarises a
// triplet, K anchors matched to g by a temperature softmax, and the expected distances
// Σ_k p_k · d_k that the loss acts on.
#pragma once

#include <cstdint>

#include <torch/nn/modules/linear.h>

#include "triplet_summary.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::discovernet {

enum class Projection { Linear, Residual };           // W_k φ, or (I + L_k) φ
enum class Summary { Set, Sequential, Transformer };  // the triplet summary g
enum class Logits { AnchorNormalized, Cosine };       // released code, or the paper's Eq. 7

struct DiscoverNetOptions {
  std::int64_t input_dim = 0;       // D, from the backbone
  std::int64_t num_embeddings = 0;  // K, defaults to the dataset's conditions
  std::int64_t embedding_dim = 0;   // E, defaults to D
  Projection projection = Projection::Linear;
  Summary g = Summary::Set;
  std::int64_t pairs = 3;  // set/transformer g: 2 = swap-invariant {[a,f],[a,c]}, 3 adds [f,c]
  double temperature = 1.0;
  Logits logits = Logits::AnchorNormalized;
  bool normalize_g_input = false;
  bool train_condition_branch = false;  // released code: g and anchors stay at random init
};

class DiscoverNet final : public ConditionModule {
 public:
  using Options = DiscoverNetOptions;
  static Schema<Options> schema();
  explicit DiscoverNet(const Options& options);

  std::int64_t num_embeddings() const override { return k_; }
  std::int64_t output_dim() const override { return e_; }

  // The condition weights p(τ) [B, K] of a triplet given its backbone embeddings.
  torch::Tensor condition_weights(const torch::Tensor& phi_anchor, const torch::Tensor& phi_close,
                                  const torch::Tensor& phi_far);

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  // Triplets only: every form of g summarises three items.
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;

 private:
  Options options_;
  std::int64_t d_, k_, e_;
  torch::nn::Linear projection_{nullptr};
  static std::shared_ptr<TripletSummary> make_summary(const Options& options, std::int64_t d);
  std::shared_ptr<TripletSummary> g_;
  torch::Tensor anchors_;  // [K, D]
};

}  // namespace wscsl::discovernet
