// A condition module written in Python: a TorchScript module with embed(φ) → ψ [B, K, E] and, for
// weakly supervised methods, weights(φ [N, D], first, second, third) → [B, K] for comparisons of
// the items' rows; wscsl fuses the distances as for its own modules, so any loss trains it and
// every evaluator evaluates it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/module.h>

#include "wscsl/sdk.hpp"

namespace wscsl::torchscript_condition_module {

struct TorchScriptConditionModuleOptions {
  std::string file;
  std::int64_t input_dim = 0;  // D, from the backbone
  bool trainable = true;
  std::int64_t num_conditions = 1;  // F, from the dataset
};

class TorchScriptConditionModule final : public ConditionModule {
 public:
  using Options = TorchScriptConditionModuleOptions;
  static Schema<Options> schema();
  // A module whose `supervision` attribute is "conditioned" needs the triplets' conditions; one
  // that scores pairs (its `scores_pairs` attribute, by default true when conditioned) provides
  // them.
  static Contract contract_of(const Options& options);
  explicit TorchScriptConditionModule(const Options& options);

  std::int64_t num_embeddings() const override { return k_; }
  std::int64_t output_dim() const override { return e_; }
  Supervision supervision() const override { return supervision_; }
  void train(bool on = true) override;

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& comparisons) override;
  torch::Tensor distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) override;

 private:
  // Checks every method on a small random batch of triplets (and of pairs when it scores them),
  // in eval mode, and reads E.
  void probe(const Options& options);
  // The probe of weights() and aux() on `comparisons` of `phi`, described as `inputs`.
  void probe_scores(const torch::Tensor& phi, const Comparisons& comparisons,
                    const std::string& inputs, const std::string& file);
  // aux(φ, first, second, third) as named tensors (its string keys and tensor values; the probe
  // has checked that they are exactly the declared aux_terms, each [B]).
  std::map<std::string, torch::Tensor> run_aux(const std::vector<c10::IValue>& inputs);
  // Throws DataError naming `file` unless `terms` are exactly the aux_terms, each [batch].
  void check_aux(const std::map<std::string, torch::Tensor>& terms, std::int64_t batch,
                 const std::string& file) const;

  torch::jit::Module script_;
  std::int64_t k_ = 0;
  std::int64_t e_ = 0;
  Supervision supervision_ = Supervision::Weak;
  bool own_distances_ = false;
  bool scores_pairs_ = false;
  std::vector<std::string> aux_terms_;  // what its aux method returns, by name
};

}  // namespace wscsl::torchscript_condition_module
