// Hand-made inputs for evaluator and loss tests: a condition module whose embeddings are whatever
// the test writes into φ, and embedding tables built from explicit values.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "wscsl/plugin/backbone.hpp"
#include "wscsl/plugin/evaluator.hpp"

namespace wscsl::testing {

// ψ is φ reshaped to [B, K, E] (so a test controls every embedding directly); the weights of
// every comparison are a fixed vector, the fused distances Σ_k w_k d_k. It scores pairs too.
class TableModule final : public ConditionModule {
 public:
  TableModule(std::int64_t num_embeddings, std::int64_t dim, std::vector<double> weights,
              Supervision supervision = Supervision::Weak);
  std::int64_t num_embeddings() const override { return k_; }
  std::int64_t output_dim() const override { return e_; }
  Supervision supervision() const override { return supervision_; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override;
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& c) override;

 private:
  std::int64_t k_, e_;
  torch::Tensor weights_;
  Supervision supervision_;
};

// A dataset made of given splits. Every image is gray (0.5) with the image id written into its
// first value (channel 0, row 0, column 0), so a test can tell which images a component saw.
class FixedDataset final : public Dataset {
 public:
  FixedDataset(DatasetInfo info, std::map<Split, SplitData> splits);
  DatasetInfo info() const override { return info_; }

 protected:
  SplitData load_split(Split split) override;
  torch::Tensor load_images(Split split, const torch::Tensor& ids,
                            const ImageRequest& request) override;

 private:
  DatasetInfo info_;
  std::map<Split, SplitData> splits_;
};

// A table whose rows are images with the given ψ [M, K, E] (φ is ψ flattened), triplets [T, 3]
// of row indices and conditions [T].
EmbeddingTable make_table(Split split, const torch::Tensor& psi,
                          const std::vector<std::array<std::int64_t, 3>>& triplets,
                          const std::vector<std::int64_t>& conditions);

// A backbone that records which images it embedded: each image's id is read from its first value
// (see FixedDataset) and counted; φ is `dim` copies of (id + 1) / 1000.
class CountingBackbone final : public Backbone {
 public:
  explicit CountingBackbone(std::int64_t dim) : dim_(dim) {}
  std::int64_t embedding_dim() const override { return dim_; }
  const std::map<std::int64_t, int>& calls_per_image() const { return calls_; }
  std::int64_t images_embedded() const { return total_; }

 protected:
  torch::Tensor forward_images(const torch::Tensor& images) override;

 private:
  std::int64_t dim_;
  std::map<std::int64_t, int> calls_;
  std::int64_t total_ = 0;
};

// Runs an evaluator as the host would, with alignments fitted on `fit` and applied to `target`.
// `shared` receives what the evaluator publishes for later ones (and may hold what earlier ones
// published); pictures go to `artifact_dir`; images come from a FixedDataset.
EvalReport run_evaluator(Evaluator& evaluator, ConditionModule& module, const EmbeddingTable& fit,
                         const EmbeddingTable& target, const DatasetInfo& info,
                         std::map<std::string, torch::Tensor>* shared = nullptr,
                         const std::filesystem::path& artifact_dir = {});

// Runs an evaluator on the splits of `dataset` (e.g. a FixedDataset with outfits): the final
// evaluation (`final`, artefacts to `artifact_dir`) or a per-epoch validation (no artefacts).
EvalReport run_evaluator(Evaluator& evaluator, ConditionModule& module, Dataset& dataset,
                         const EmbeddingTable& fit, const EmbeddingTable& target, bool final,
                         const std::filesystem::path& artifact_dir = {});

// The value of a metric of a report; throws if it is absent.
double metric(const EvalReport& report, const std::string& name);

// DatasetInfo with the given condition names (3×32×32 images, splits train/val/test).
DatasetInfo dataset_info(const std::vector<std::string>& condition_names);

// The items of a batch of triplets by role, row i of each a member of triplet i, and the batch as
// the host lays it out: a block per role, the anchors, then the close and the far items.
struct TripletRoles {
  ItemFeatures anchor, close, far;

  ItemBlocks items() const;
  Comparisons triplets() const;
};

// A batch of `batch` triplets laid out by role (Comparisons::triplets_by_role) with
// standard-normal φ [3B, dim] (anchors, then close, then far items), embedded by `module`; with
// `with_conditions`, conditions drawn uniformly from [0, K).
struct RandomTriplets {
  ItemFeatures items;
  Comparisons comparisons;
};
RandomTriplets random_triplets(ConditionModule& module, std::int64_t batch, std::int64_t dim,
                               bool with_conditions = false);

// The contract of a test module that scores pairs as well as triplets.
Contract pair_scoring();

// Text features as a text encoder gives them: one row per entry of `present`, a random unit
// vector of `dim` values where the item has text and zeros where it has none.
TextFeatures unit_text_features(const std::vector<bool>& present, std::int64_t dim);

// The parameter of `module` (or of a submodule) named `name`, e.g. "masks.weight"; throws if none.
torch::Tensor parameter(const torch::nn::Module& module, const std::string& name);

// A torchvision ResNet-18 state dict with torchvision's names and the shapes resnet18_trunk
// loads (conv1 over `input_channels`, bn1, layer1-3 with their num_batches_tracked), random
// values drawn from `seed`, and a small layer4 and fc entry that a trunk must ignore; written to
// `file` as torch.save would.
void write_resnet18_weights(const std::filesystem::path& file, int input_channels = 3,
                            std::uint64_t seed = 0);

}  // namespace wscsl::testing
