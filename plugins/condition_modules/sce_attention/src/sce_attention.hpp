// SCE-Net (Tan, Vasileva, Saenko, Plummer, ICCV 2019): K condition masks over a shared embedding
// and a condition-weight branch that weights the masked embeddings into one fused embedding
// E(v) = Σ_k w_k ψ_k(v); distances are taken between fused embeddings. The branch reads the whole
// triplet (the released UT-Zappos code) or the two items of each distance (the paper's Eq. 3, the
// outfit variant), from their images, their texts or both (Eq. 6, 7); the paper's Figure 3
// baselines replace it with uniform or random weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <torch/nn/modules/linear.h>

#include "wscsl/nn/condition_masks.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::sce_attention {

// A member of a comparison: of a triplet, the anchor, the close and the far item.
enum class Member { First, Second, Third };

// What one weight vector is computed from.
enum class Branch {
  Triplet,  // w([a; f; c]) for both distances of the triplet (the released UT-Zappos code)
  Pair,     // w([a; c]) for d(a, c) and w([a; f]) for d(a, f) (Eq. 3, the outfit variant)
};

// The per-item features the branch reads.
enum class BranchInput {
  Visual,      // φ̂, the (normalised) backbone embedding
  Text,        // T, the features of a text encoder (Eq. 6)
  VisualText,  // φ̂ ⊙ T (Eq. 7)
};

// Where the condition weights come from.
enum class Assignment {
  Learned,  // the branch: softmax(Linear(ReLU(Linear(y))))
  Average,  // 1/K for every embedding (Figure 3, "average")
  // The released random baseline (Vasileva et al.'s --rand_typespaces, which SCE-Net's main.py
  // keeps): each type-pair condition one embedding, from a random partition drawn once.
  Partition,
  PerCall,  // one embedding drawn uniformly for each weight vector at every call (our reading)
};

// The released random partition of `conditions` type-pair conditions among `embeddings`: the
// conditions in the order of a permutation from LibTorch's generator, in blocks of
// ⌈conditions / embeddings⌉, block j embedding j. [conditions] int64.
torch::Tensor released_partition(std::int64_t conditions, std::int64_t embeddings);

struct SceAttentionOptions {
  std::int64_t input_dim = 0;                  // D, from the backbone
  std::int64_t num_embeddings = 0;             // K (num_concepts), defaults to the conditions
  nn::MaskInit masks = nn::MaskInit::Learned;  // the README's training command uses --learned
  std::int64_t hidden = 32;
  bool normalize = true;  // released code: v/(‖v‖+1e-10) on ψ_k and on the visual branch inputs
  Branch branch = Branch::Triplet;
  BranchInput branch_input = BranchInput::Visual;
  std::optional<std::string> text;  // the text encoder; required when the branch reads text
  Assignment assignment = Assignment::Learned;
  std::int64_t num_conditions = 0;  // the dataset's conditions, partitioned by "random"
};

class SceAttention final : public ConditionModule {
 public:
  using Options = SceAttentionOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit SceAttention(const Options& options);

  std::int64_t num_embeddings() const override { return masks_->count(); }
  // The released random baseline looks each triplet's type pair up in its partition.
  Supervision supervision() const override {
    return options_.assignment == Assignment::Partition ? Supervision::Conditioned
                                                        : Supervision::Weak;
  }
  std::int64_t output_dim() const override { return d_; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  // ComparisonScores::weights are the weights of d(first, second): the triplet's with the triplet
  // branch, the (first, second) pair's with the pair branch.
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  torch::Tensor maybe_normalize(const torch::Tensor& v) const;
  // The branch's features of one member of the comparisons, [B, D].
  torch::Tensor branch_features(const ComparedItems& in, Member member) const;
  // The weights [B, K] of the members compared, read by the branch in this order.
  torch::Tensor condition_weights(const ComparedItems& in, const Comparisons& comparisons,
                                  const std::vector<Member>& members);

  Options options_;
  std::int64_t d_;
  std::shared_ptr<nn::ConditionMasks> masks_;
  torch::nn::Linear hidden_{nullptr}, logits_{nullptr};  // only with assignment = learned
  torch::Tensor partition_;  // [conditions] the embedding of each condition; only with partition
};

}  // namespace wscsl::sce_attention
