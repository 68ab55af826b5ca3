// What crosses the plugin boundary between embedding and scoring: the features of a set of items,
// each computed once, and the comparisons among them. A comparison is a pair of items, or a
// triplet: a pair with a third item ("first is closer to second than to third").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "wscsl/plugin/text_encoder.hpp"

namespace wscsl {

struct ItemGroup;

// One row per item.
struct ItemFeatures {
  torch::Tensor phi;  // [N, D] backbone embeddings
  torch::Tensor psi;  // [N, K, E] from ConditionModule::embed
  // By text encoder name: every text encoder of the pipeline (Resource::TextFeatures), [N, E].
  std::map<std::string, TextFeatures> texts;
  // The groups these items were computed in, each with the row tensor that selects it (the host
  // sets them for a training batch's roles): rows() of that very tensor returns the group's own
  // features instead of a gathered copy, so that every reader of a role computes with the role's
  // tensors and their gradients add up as on the role's tensors.
  std::vector<ItemGroup> groups;

  std::int64_t size() const { return phi.defined() ? phi.size(0) : 0; }
  // The items of `rows` ([B] int64), in that order.
  ItemFeatures rows(const torch::Tensor& rows) const;
  ItemFeatures to(torch::Device device) const;
  // The items of `parts` one after another, e.g. a batch's anchors, then its close and far items.
  static ItemFeatures concatenated(const std::vector<ItemFeatures>& parts);
};

struct ItemGroup {
  torch::Tensor rows;  // [n] int64, the group's rows among the items
  std::shared_ptr<const ItemFeatures> features;
};

// B comparisons of items given as rows of an ItemFeatures.
struct Comparisons {
  torch::Tensor first, second;  // [B] int64 item rows
  torch::Tensor third;          // [B] int64 item rows of triplets; undefined for pairs
  torch::Tensor conditions;     // [B] int64 condition of each comparison, or undefined

  std::int64_t size() const { return first.defined() ? first.size(0) : 0; }
  bool are_triplets() const { return third.defined(); }

  // Triplets of rows [B, 3] (first, second, third).
  static Comparisons triplets(const torch::Tensor& rows);
  // The triplets of a batch laid out by role, as ItemFeatures::concatenated puts them: items
  // [0, B) are the anchors, [B, 2B) the close items, [2B, 3B) the far ones.
  static Comparisons triplets_by_role(std::int64_t batch, torch::Device device);
  static Comparisons pairs(torch::Tensor first, torch::Tensor second);

  // The same triplets with second and third swapped; throws Error for pairs.
  Comparisons reversed() const;
  Comparisons slice(std::int64_t begin, std::int64_t end) const;
  Comparisons without_conditions() const;
  Comparisons to(torch::Device device) const;
};

// The features of each comparison's members, gathered by row ([B, …] each): what most modules
// compute with.
struct ComparedItems {
  ItemFeatures first, second;
  ItemFeatures third;  // of triplets only
};
ComparedItems gather(const ItemFeatures& items, const Comparisons& comparisons);

// What a condition module computes for B comparisons.
struct ComparisonScores {
  torch::Tensor second_distances;  // [B, K] d_k(first, second) under each embedding
  torch::Tensor third_distances;   // [B, K] d_k(first, third); undefined for pairs
  torch::Tensor weights;           // [B, K] condition weights of each comparison (rows sum to 1)
  torch::Tensor fused_second;      // [B] the distance the module predicts with
  torch::Tensor fused_third;       // [B]; undefined for pairs
  // Module-specific terms for losses ("mask_l1", ...), [B] each: exactly the AuxTerm provisions
  // of the module's contract.
  std::map<std::string, torch::Tensor> aux;
};

}  // namespace wscsl
