// ASEN++ (Dong et al., IEEE TIP 2021) as released: a global branch (ASENet_V2's attention over the
// backbone's feature map, without its batch norm) and a local branch (the image cropped where the
// global attention looks, a second ResNet trunk, the same attention again), joined as
// ψ_k = √β·normalize(g_k) ⊕ √(1−β)·normalize(l_k). Trained in two stages as released: the global
// branch alone, then both (stage = "joint"), initialised from the first stage's weights.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <torch/nn/modules/embedding.h>

#include "wscsl/nn/attribute_attention.hpp"
#include "wscsl/nn/resnet.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::asen_pp {

enum class Stage {
  Global,  // the released s1.yaml: the global branch alone, ψ_k = normalize(g_k)
  Joint,   // the released s2.yaml: both branches
};

// The local branch's trunk: torchvision's ResNet to layer3, as the release's `resnet34`/`resnet18`.
enum class LocalTrunk { Resnet34, Resnet18 };

struct AsenPpOptions {
  Stage stage = Stage::Global;
  std::int64_t num_conditions = 0;        // K
  std::int64_t feature_map_channels = 0;  // C of the global backbone's map
  std::int64_t input_channels = 0;        // the images', for the local trunk
  std::int64_t attribute_dim = 512;       // MODEL.ATTRIBUTE.EMBED_SIZE
  std::int64_t common_dim = 512;          // MODEL.GLOBAL.ATTENTION.SPATIAL.COMMON_EMBED_SIZE
  std::int64_t reduction = 2;             // MODEL.GLOBAL.ATTENTION.CHANNEL.REDUCTION_RATE
  std::int64_t embedding_dim = 1024;      // MODEL.EMBED_SIZE, of each branch
  LocalTrunk local_trunk = LocalTrunk::Resnet34;  // MODEL.LOCAL.BACKBONE.NAME
  std::string local_weights;                      // a torchvision ResNet state dict, or none
  std::int64_t local_common_dim = 256;            // MODEL.LOCAL.ATTENTION.SPATIAL.COMMON_EMBED_SIZE
  std::int64_t local_reduction = 2;               // MODEL.LOCAL.ATTENTION.CHANNEL.REDUCTION_RATE
  std::int64_t local_size = 112;                  // INPUT.LOCAL_SIZE
  double threshold = 0.1;                         // INPUT.THRESHOLD of s2.yaml
  double beta = 0.6;                              // SOLVER.BETA
  std::string initial_weights;                    // the first stage's `wscsl export-weights` file
};

// The local branch's trunk as a module of its own, so that torchvision's names load into it.
class LocalResNetImpl : public torch::nn::Module {
 public:
  LocalResNetImpl(LocalTrunk trunk, std::int64_t input_channels);
  torch::Tensor forward(const torch::Tensor& images) { return stages_.forward(images); }
  std::int64_t out_channels() const { return stages_.out_channels(); }

 private:
  nn::ResNetStages stages_;
};
TORCH_MODULE(LocalResNet);

// One branch's attention layers as a module of their own (global_branch.…, local_branch.…; not
// "global", a Python keyword, which TorchScript archives cannot name).
class BranchImpl : public torch::nn::Module {
 public:
  explicit BranchImpl(const nn::AttributeBranchSizes& sizes)
      : branch_(*this, sizes, /*batch_norm=*/false) {}
  torch::Tensor attention(const torch::Tensor& map, const torch::Tensor& attributes) {
    return branch_.attention(map, attributes);
  }
  std::pair<torch::Tensor, torch::Tensor> embed(const torch::Tensor& map,
                                                const torch::Tensor& attributes) {
    return branch_.embed(map, attributes);
  }

 private:
  nn::AttributeBranch branch_;
};
TORCH_MODULE(Branch);

class AsenPp final : public ConditionModule {
 public:
  using Options = AsenPpOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit AsenPp(const Options& options);

  std::int64_t num_embeddings() const override { return options_.num_conditions; }
  std::int64_t output_dim() const override {
    return options_.stage == Stage::Joint ? 2 * options_.embedding_dim : options_.embedding_dim;
  }
  Supervision supervision() const override { return Supervision::Conditioned; }

  // The local branch's embeddings l [B, K, E] (not normalised) of `images` under the global
  // attention `attention` [B, K, h, w]: one crop per image and attribute (stage = "joint").
  torch::Tensor local_embeddings(const torch::Tensor& images, const torch::Tensor& attention);

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  torch::Tensor attention_maps_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  void load_initial_weights(const std::string& file);

  Options options_;
  torch::nn::Embedding attributes_{nullptr};  // shared by both branches, as released
  Branch global_{nullptr};
  LocalResNet local_trunk_{nullptr};  // Joint only
  Branch local_{nullptr};             // Joint only
};

}  // namespace wscsl::asen_pp
