#include "asen.hpp"

#include <fmt/format.h>

#include "wscsl/config/limits.hpp"
#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/plugin/condition_options.hpp"

namespace wscsl::asen {

Schema<AsenOptions> Asen::schema() {
  using O = AsenOptions;
  Schema<O> s(
      "ASEN (Ma et al., AAAI 2020) as released: per attribute, spatial attention over the "
      "backbone's feature map, channel attention, a linear layer to E, L2-normalised; a triplet "
      "is compared under its attribute (supervised) by 1 − ψ_a·ψ_b.");
  s.field("variant", &O::variant,
          "\"v2\": ASENet_V2 (attribute embedding, batch norm on the map, scaled dot-product "
          "attention), the variant the authors released weights for; \"v1\": ASENet (one-hot "
          "attributes, a learned 1×1 attention score), the AAAI code's --model default.",
          EnumChoices<Variant>{
              {Variant::V2, "v2", "ASENet_V2: embedding, batch norm, Σ m·q / √d"},
              {Variant::V1, "v1", "ASENet: one-hot attributes, tanh(conv1×1(m ⊙ q))"}});
  condition_options::num_conditions(
      s, &O::num_conditions, "K, one embedding per attribute (set from the dataset's conditions).");
  condition_options::feature_map_channels(s, &O::feature_map_channels);
  s.field("attribute_dim", &O::attribute_dim,
          "Size of v2's attribute embedding (the released 512); v1 has none.")
      .min(1)
      .max(kMaxLayerSize)
      .only_when("variant = \"v2\"", [](const O& o) { return o.variant == Variant::V2; });
  s.field("common_dim", &O::common_dim,
          "d, the size the map (1×1 convolution) and the attribute meet in for the spatial "
          "attention (the released 512).")
      .min(1)
      .max(kMaxLayerSize);
  s.field("reduction", &O::reduction,
          "The channel attention's reduction rate: C / reduction hidden units (the released 2).")
      .min(1);
  s.field("embedding_dim", &O::embedding_dim,
          "E, the size of each ψ_k (the released --dim_embed 1024).")
      .min(1)
      .max(kMaxLayerSize);
  s.check([](const O& o, FieldChecker& c) {
    if (o.reduction > o.feature_map_channels)
      c.error("reduction",
              fmt::format("leaves no hidden unit: the feature map has {} channels, fewer than {}",
                          o.feature_map_channels, o.reduction));
  });
  return s;
}

Contract Asen::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::AttentionMaps}, {Resource::PairScores}};
  c.needs = {{Resource::FeatureMap}, {Resource::TripletConditions}};
  return c;
}

Asen::Asen(const Options& options) : options_(options) {
  namespace tnn = torch::nn;
  const std::int64_t k = options.num_conditions, c = options.feature_map_channels,
                     d = options.common_dim;
  switch (options.variant) {
    case Variant::V1:
      spatial_table_ =
          register_module("spatial_table", tnn::Linear(tnn::LinearOptions(k, d).bias(false)));
      channel_table_ =
          register_module("channel_table", tnn::Linear(tnn::LinearOptions(k, c).bias(false)));
      spatial_ = register_module(
          "spatial", nn::SpatialAttention(c, d, nn::AttentionScore::Learned, /*batch_norm=*/false));
      channel_ = register_module("channel", nn::ChannelAttention(c, c, options.reduction));
      head_ = register_module("head", tnn::Linear(c, options.embedding_dim));
      break;
    case Variant::V2:
      attributes_ = register_module("attributes", tnn::Embedding(k, options.attribute_dim));
      branch_ = std::make_unique<nn::AttributeBranch>(
          *this,
          nn::AttributeBranchSizes{c, options.attribute_dim, d, options.reduction,
                                   options.embedding_dim},
          /*batch_norm=*/true);
      break;
  }
}

torch::Tensor Asen::attention_maps_impl(const EmbedInput& input) {
  switch (options_.variant) {
    case Variant::V1:  // tanh(W e_k) of the one-hot e_k: column k of W
      return spatial_->weights(input.feature_map, torch::tanh(spatial_table_->weight.t()));
    case Variant::V2:
      return branch_->attention(input.feature_map, attributes_->weight);
  }
  return {};
}

torch::Tensor Asen::embed_impl(const EmbedInput& input) {
  const torch::Tensor& map = input.feature_map;
  switch (options_.variant) {
    case Variant::V1: {
      const torch::Tensor attended = nn::SpatialAttentionImpl::attend(
          map, spatial_->weights(map, torch::tanh(spatial_table_->weight.t())));
      const torch::Tensor gated =
          channel_->forward(attended, torch::relu(channel_table_->weight.t()));
      return nn::normalize_clamped(head_->forward(gated), -1);
    }
    case Variant::V2:
      return nn::normalize_clamped(branch_->embed(map, attributes_->weight).first, -1);
  }
  return {};
}

torch::Tensor Asen::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return 1 - (psi_a * psi_b).sum(-1);
}

ComparisonScores Asen::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  return nn::conditioned_distances(*this, items, comparisons);
}

}  // namespace wscsl::asen

WSCSL_PLUGIN(asen, "0.1.0",
             "ASEN, attribute-specific embedding with spatial and channel attention (Ma et al., "
             "AAAI 2020)") {
  registrar.add<wscsl::ConditionModule, wscsl::asen::Asen>("asen");
}
