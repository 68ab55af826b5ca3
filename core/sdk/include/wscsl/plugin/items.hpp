// What crosses the plugin boundary between embedding and scoring: the features of a set of items,
// each computed once, and the comparisons among them. A comparison is a pair of items, or a
// triplet: a pair with a third item ("first is closer to second than to third").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "wscsl/plugin/text_encoder.hpp"

namespace wscsl {

// The features of a set of items, one row per item.
struct ItemFeatures {
  torch::Tensor phi;  // [N, D] backbone embeddings
  torch::Tensor psi;  // [N, K, E] from ConditionModule::embed
  // By text encoder name: every text encoder of the pipeline (Resource::TextFeatures), [N, E].
  std::map<std::string, TextFeatures> texts;

  std::int64_t size() const { return phi.defined() ? phi.size(0) : 0; }
  // The items of `rows` ([B] int64), in that order: a gathered copy.
  ItemFeatures rows(const torch::Tensor& rows) const;
  // The items on `device`.
  ItemFeatures to(torch::Device device) const;
  // The items of `parts` one after another, e.g. the chunks a split was embedded in.
  static ItemFeatures concatenated(const std::vector<ItemFeatures>& parts);
};

// The items a condition module scores and a loss reads, held in the blocks they were computed in:
// rows [0, n₀) are blocks()[0], the next n₁ rows blocks()[1], and so on. A training batch's
// blocks are its roles (anchors, close items, far items: Comparisons::triplets_by_role); a table
// of items is one block. The blocks are the only copy: by_row() derives the items by row on demand.
class ItemBlocks {
 public:
  ItemBlocks() = default;  // no items
  // One block: items held by row (implicit, so that a table of items is scored as it is).
  ItemBlocks(ItemFeatures items);
  // Throws Error unless every block holds the same features (φ, ψ and text encoders).
  explicit ItemBlocks(std::vector<ItemFeatures> blocks);

  const std::vector<ItemFeatures>& blocks() const { return blocks_; }
  std::int64_t size() const;  // the rows of all blocks
  // Whether the items hold the features of text encoder `name`.
  bool has_texts(const std::string& name) const;
  // Every item by row: the one block itself, or the blocks concatenated on the first call and
  // kept (copies of these ItemBlocks share it), with gradient recorded whatever the caller's
  // grad mode, so that a reader without gradient does not cut it for a later one.
  const ItemFeatures& by_row() const;
  // The blocks on `device`.
  ItemBlocks to(torch::Device device) const;

 private:
  struct Concatenation;
  std::vector<ItemFeatures> blocks_;
  std::shared_ptr<Concatenation> by_row_;  // made with the blocks, filled by the first by_row()
};

struct Comparisons;

// Comparisons laid out by role over items held in blocks (ItemBlocks): member `first` of
// comparison i is row `begin + i` of block `first`, and likewise for `second` and `third`.
// Only Comparisons declares one: triplets_by_role makes it with the rows it names, and reversed(),
// slice(), to() and without_conditions() keep it with theirs. The layout holds the very row tensors
// it was declared with, so that ConditionModule::score trusts it without reading a row (no host
// sync): it refuses comparisons whose rows were replaced since. Over items in more than one block,
// gather() gives each member its block's own tensors (sliced for a slice of the comparisons)
// rather than a gathered copy, so that every reader of a role computes with the role's tensors and
// their gradients add up on them. Comparisons made from rows (triplets(), pairs(), or fields set by
// hand) declare none.
class RoleLayout {
 public:
  RoleLayout() = default;  // declares none

  bool declared() const { return first_ >= 0; }
  // The block of each member; -1: none.
  std::int64_t first() const { return first_; }
  std::int64_t second() const { return second_; }
  std::int64_t third() const { return third_; }
  std::int64_t begin() const { return begin_; }  // the row, in each block, of the first comparison
  // Whether `comparisons`' member rows are the tensors this layout was declared with (compares
  // tensor identity, not values: it reads nothing from a device).
  bool holds_rows_of(const Comparisons& comparisons) const;

 private:
  friend struct Comparisons;
  RoleLayout(std::int64_t first, std::int64_t second, std::int64_t third, std::int64_t begin,
             const Comparisons& rows);

  std::int64_t first_ = -1, second_ = -1, third_ = -1;
  std::int64_t begin_ = 0;
  torch::Tensor rows_[3];  // the first, second and third rows it was declared with
};

// The host copies of comparisons' member rows that Comparisons::to moved from the CPU to another
// device, kept so that ConditionModule::score checks the rows' range on the host, without waiting
// for the device. Found by tensor identity (reversed() swaps members and keeps them); slice()
// slices them with the rows.
class HostRows {
 public:
  // The host copy of `rows` (a member of the comparisons): `rows` itself on the CPU, else the copy
  // it was moved from, else an undefined tensor (rows made on the device, or replaced since).
  torch::Tensor of(const torch::Tensor& rows) const;

 private:
  friend struct Comparisons;
  // The host copies of `after`'s rows on a device other than the CPU, each `derive`d (e.g.
  // sliced) from that of the same member of `before` (these rows, or the copy they were moved
  // from).
  static HostRows kept(const Comparisons& before, const Comparisons& after,
                       const std::function<torch::Tensor(const torch::Tensor&)>& derive);

  torch::Tensor host_[3], moved_[3];  // of first, second, third
};

// B comparisons of items given as rows of ItemBlocks.
struct Comparisons {
  torch::Tensor first, second;  // [B] int64 item rows
  torch::Tensor third;          // [B] int64 item rows of triplets; undefined for pairs
  torch::Tensor conditions;     // [B] int64 condition of each comparison, or undefined
  RoleLayout roles;             // declared by triplets_by_role only
  HostRows host;                // kept by to() from the CPU

  std::int64_t size() const { return first.defined() ? first.size(0) : 0; }
  bool are_triplets() const { return third.defined(); }

  // Triplets of rows [B, 3] (first, second, third).
  static Comparisons triplets(const torch::Tensor& rows);
  // The triplets of a batch laid out by role, over items in a block per role: items
  // [0, B) are the anchors (block 0), [B, 2B) the close items (block 1), [2B, 3B) the far ones
  // (block 2); the RoleLayout says so.
  static Comparisons triplets_by_role(std::int64_t batch, torch::Device device);
  static Comparisons pairs(torch::Tensor first, torch::Tensor second);

  // The same triplets with second and third swapped; throws Error for pairs.
  Comparisons reversed() const;
  Comparisons slice(std::int64_t begin, std::int64_t end) const;
  Comparisons without_conditions() const;
  Comparisons to(torch::Device device) const;

 private:
  // `c` with the role layout (blocks first, second, third from row `begin`) declared over its rows.
  static Comparisons laid_out(Comparisons c, std::int64_t first, std::int64_t second,
                              std::int64_t third, std::int64_t begin);
};

// The features of each comparison's members, [B, …] each: what most modules compute with. A member
// the comparisons' RoleLayout names, over items in more than one block, is its block's own tensors
// (a slice of them for a slice of the comparisons); any other is gathered from
// ItemBlocks::by_row().
struct ComparedItems {
  ItemFeatures first, second;
  ItemFeatures third;  // of triplets only
};
ComparedItems gather(const ItemBlocks& items, const Comparisons& comparisons);

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
