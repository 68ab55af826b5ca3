// A third-party plugin whose tensors have the wrong shape where its options say so: a backbone
// (φ) and a condition module (distances, weights), for the probe of `wscsl check`. With
// `mistake = "none"` both are correct and train.
#include "wscsl/sdk.hpp"

namespace {

enum class PhiMistake { None, Phi };
enum class ModuleMistake { None, Distances, Weights };

struct MisshapedBackboneOptions {
  std::int64_t input_channels = 0;
  std::int64_t embedding_dim = 8;
  PhiMistake mistake = PhiMistake::None;
};

// φ = the images' channel means through a learned [C, D] map; "phi" returns [B, D, 1].
class MisshapedBackbone final : public wscsl::Backbone {
 public:
  using Options = MisshapedBackboneOptions;
  static wscsl::Schema<Options> schema() {
    wscsl::Schema<Options> s("φ = channel means × W (a test fixture), optionally misshaped.");
    s.field("input_channels", &Options::input_channels, "C (set from the dataset).")
        .min(1)
        .derived(wscsl::facts::dataset_channels);
    s.field("embedding_dim", &Options::embedding_dim, "D.").min(1);
    s.field("mistake", &Options::mistake, "What it returns wrong.",
            wscsl::EnumChoices<PhiMistake>{{PhiMistake::None, "none", "nothing"},
                                           {PhiMistake::Phi, "phi", "φ as [B, D, 1]"}});
    return s;
  }
  explicit MisshapedBackbone(const Options& o) : options_(o) {
    map_ = register_parameter("map", torch::randn({o.input_channels, o.embedding_dim}));
  }
  std::int64_t embedding_dim() const override { return options_.embedding_dim; }

 protected:
  torch::Tensor forward_images(const torch::Tensor& images) override {
    const torch::Tensor phi = images.mean({2, 3}).matmul(map_);
    switch (options_.mistake) {
      case PhiMistake::None:
        return phi;
      case PhiMistake::Phi:
        return phi.unsqueeze(2);
    }
    throw wscsl::Error("misshaped_backbone: unknown mistake");
  }

 private:
  Options options_;
  torch::Tensor map_;
};

struct MisshapedModuleOptions {
  std::int64_t input_dim = 0;
  std::int64_t num_embeddings = 0;
  ModuleMistake mistake = ModuleMistake::None;
};

// K learned scalings of φ, uniform weights; "distances" returns [B] (summed over K), "weights"
// returns [B].
class MisshapedModule final : public wscsl::ConditionModule {
 public:
  using Options = MisshapedModuleOptions;
  static wscsl::Schema<Options> schema() {
    wscsl::Schema<Options> s(
        "ψ_k = s_k φ, uniform weights (a test fixture), optionally misshaped.");
    s.field("input_dim", &Options::input_dim, "D (set from the backbone).")
        .min(1)
        .derived(wscsl::facts::backbone_embedding_dim);
    s.field("num_embeddings", &Options::num_embeddings, "K (default: the dataset's conditions).")
        .min(1)
        .default_from(wscsl::facts::dataset_num_conditions);
    s.field("mistake", &Options::mistake, "What it returns wrong.",
            wscsl::EnumChoices<ModuleMistake>{
                {ModuleMistake::None, "none", "nothing"},
                {ModuleMistake::Distances, "distances", "distances as [B]"},
                {ModuleMistake::Weights, "weights", "weights as [B]"}});
    return s;
  }
  explicit MisshapedModule(const Options& o) : options_(o) {
    scales_ = register_parameter("scales", torch::ones({o.num_embeddings}));
  }
  std::int64_t num_embeddings() const override { return options_.num_embeddings; }
  std::int64_t output_dim() const override { return options_.input_dim; }

 protected:
  torch::Tensor embed_impl(const wscsl::EmbedInput& input) override {
    return input.phi.unsqueeze(1) * scales_.view({1, -1, 1});
  }
  wscsl::ComparisonScores score_impl(const wscsl::ItemBlocks& items,
                                     const wscsl::Comparisons& c) override {
    const wscsl::ComparedItems in = wscsl::gather(items, c);
    wscsl::ComparisonScores s;
    s.second_distances = distances(in.first.psi, in.second.psi);
    s.third_distances = distances(in.first.psi, in.third.psi);
    const std::int64_t k = options_.num_embeddings;
    s.weights = torch::full({c.size(), k}, 1.0 / static_cast<double>(k), in.first.phi.options());
    if (options_.mistake == ModuleMistake::Weights) s.weights = s.weights.sum(1);
    s.fused_second = s.second_distances.mean(1);
    s.fused_third = s.third_distances.mean(1);
    return s;
  }
  torch::Tensor distances_impl(const torch::Tensor& a, const torch::Tensor& b) override {
    const torch::Tensor d = (a - b).norm(2, {-1});
    return options_.mistake == ModuleMistake::Distances ? d.sum(1) : d;
  }

 private:
  Options options_;
  torch::Tensor scales_;
};

}  // namespace

WSCSL_PLUGIN(misshaped, "1.0.0", "A backbone and a condition module with misshaped tensors") {
  registrar.add<wscsl::Backbone, MisshapedBackbone>("misshaped_backbone");
  registrar.add<wscsl::ConditionModule, MisshapedModule>("misshaped_module");
}
