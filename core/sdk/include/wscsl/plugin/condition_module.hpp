// Condition module: φ → one embedding ψ_k per condition for each image, and, for a triplet,
// per-condition distances, condition weights and the fused distances a loss acts on.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "wscsl/plugin/component.hpp"
#include "wscsl/plugin/text_encoder.hpp"

namespace wscsl {

enum class Supervision {
  Weak,         // never sees the triplet's condition while training (WS-CSL)
  Conditioned,  // needs the condition label of every training triplet (CSN-style)
};

// The text features of a triplet's three items under one text encoder.
struct TextTriplet {
  TextFeatures anchor, close, far;
};

struct TripletInput {
  torch::Tensor phi_anchor, phi_close, phi_far;  // [B, D] backbone embeddings
  torch::Tensor psi_anchor, psi_close, psi_far;  // [B, K, E] from ConditionModule::embed
  torch::Tensor conditions;                      // [B] int64; defined for Conditioned modules
  // By text encoder name: every text encoder of the pipeline (Resource::TextFeatures).
  std::map<std::string, TextTriplet> texts;

  // The same triplet with close and far swapped: (anchor, far, close).
  TripletInput reversed() const;
  // The same triplet with every tensor on `device`.
  TripletInput to(torch::Device device) const;
};

struct TripletScores {
  torch::Tensor close_distances;  // [B, K] d_k(anchor, close) under each embedding
  torch::Tensor far_distances;    // [B, K] d_k(anchor, far)
  torch::Tensor weights;          // [B, K] condition weights of the triplet (rows sum to 1)
  torch::Tensor fused_close;      // [B] the distance the module predicts with
  torch::Tensor fused_far;        // [B]
  // Module-specific terms for losses ("mask_l1", ...): exactly the AuxTerm provisions of the
  // module's contract.
  std::map<std::string, torch::Tensor> aux;
};

class ConditionModule : public Component, public torch::nn::Module {
 public:
  static constexpr Kind kind_v = Kind::ConditionModule;
  ~ConditionModule() override;
  Kind kind() const noexcept final { return Kind::ConditionModule; }

  // Per image: φ [B, D] → ψ [B, K, E]. This is what retrieval and alignment use.
  torch::Tensor embed(const torch::Tensor& phi);
  // Per triplet, from embeddings computed once per image.
  TripletScores score(const TripletInput& input);
  // d_k(a, b) for every embedding k: ψ_a, ψ_b [B, K, E] → [B, K].
  torch::Tensor distances(const torch::Tensor& psi_a, const torch::Tensor& psi_b);

  virtual std::int64_t num_embeddings() const = 0;  // K
  virtual std::int64_t output_dim() const = 0;      // E
  // A Conditioned module also declares Need{Resource::TripletConditions} in its contract.
  virtual Supervision supervision() const { return Supervision::Weak; }

 protected:
  virtual torch::Tensor embed_impl(const torch::Tensor& phi) = 0;
  virtual TripletScores score_impl(const TripletInput& input) = 0;
  // Default: Euclidean distance over the last dimension, no epsilon.
  virtual torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b);
};

}  // namespace wscsl
