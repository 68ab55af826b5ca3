#include "asen_pp.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attention_crop.hpp"
#include "wscsl/config/facts.hpp"
#include "wscsl/config/limits.hpp"
#include "wscsl/error.hpp"
#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/plugin/condition_options.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::asen_pp {

namespace {

bool joint(const AsenPpOptions& o) {
  return o.stage == Stage::Joint;
}

// The names of the aux terms of the joint stage, per triplet under its attribute: the global and
// the local branch's distances 1 − cos, and Σ over its three images of 1 − cos(g, l).
const std::vector<std::string> kAuxTerms = {"global_close", "global_far", "local_close",
                                            "local_far", "alignment"};

}  // namespace

Schema<AsenPpOptions> AsenPp::schema() {
  using O = AsenPpOptions;
  Schema<O> s(
      "ASEN++ (Dong et al., TIP 2021) as released: the global branch (attention over the "
      "backbone's feature map), the local branch (the image cropped where that attention looks, a "
      "second ResNet trunk, attention again), ψ_k = √β·normalize(g_k) ⊕ √(1−β)·normalize(l_k); "
      "trained in two stages, the global branch first. Supervised: a triplet is compared under "
      "its attribute by 1 − ψ_a·ψ_b.");
  s.field("stage", &O::stage,
          "\"global\": the first released stage (s1.yaml), the global branch alone; \"joint\": "
          "the second (s2.yaml), both branches, trained with loss/asen_pp_joint and started from "
          "the first stage's weights (initial_weights).",
          EnumChoices<Stage>{{Stage::Global, "global", "the global branch alone (s1.yaml)"},
                             {Stage::Joint, "joint", "both branches (s2.yaml)"}});
  condition_options::num_conditions(
      s, &O::num_conditions, "K, one embedding per attribute (set from the dataset's conditions).");
  condition_options::feature_map_channels(s, &O::feature_map_channels);
  s.field("input_channels", &O::input_channels,
          "The images' channels, which the local trunk reads (set from the dataset).")
      .min(1)
      .derived(facts::dataset_channels);
  s.field("attribute_dim", &O::attribute_dim,
          "Size of the attribute embedding both branches share (ATTRIBUTE.EMBED_SIZE, released "
          "512).")
      .min(1)
      .max(kMaxLayerSize);
  s.field("common_dim", &O::common_dim,
          "d of the global branch: where its map and the attribute meet (released 512).")
      .min(1)
      .max(kMaxLayerSize);
  s.field("reduction", &O::reduction,
          "The global channel attention's reduction rate: C / reduction hidden units (released 2).")
      .min(1);
  s.field("embedding_dim", &O::embedding_dim,
          "E, the size of each branch's embedding (MODEL.EMBED_SIZE, released 1024); ψ_k holds E "
          "values in the global stage and 2E in the joint one.")
      .min(1)
      .max(kMaxLayerSize);
  const auto only_joint = [](const O& o) { return joint(o); };
  s.field("local_trunk", &O::local_trunk,
          "The local branch's trunk, torchvision's ResNet to layer3 (256 channels): \"resnet34\" "
          "(released) or \"resnet18\".",
          EnumChoices<LocalTrunk>{{LocalTrunk::Resnet34, "resnet34", "ResNet-34 to layer3"},
                                  {LocalTrunk::Resnet18, "resnet18", "ResNet-18 to layer3"}})
      .only_when("stage = \"joint\"", only_joint);
  s.field("local_weights", &O::local_weights,
          "A torchvision ResNet-34 (or -18) state dict for the local trunk (ImageNet weights, as "
          "released; scripts/convert-weights.py converts torchvision's files); layer4 and fc are "
          "ignored. Empty: torchvision's random initialisation.")
      .path()
      .only_when("stage = \"joint\"", only_joint);
  s.field("local_common_dim", &O::local_common_dim,
          "d of the local branch (LOCAL.ATTENTION.SPATIAL.COMMON_EMBED_SIZE, released 256).")
      .min(1)
      .max(kMaxLayerSize)
      .only_when("stage = \"joint\"", only_joint);
  s.field("local_reduction", &O::local_reduction,
          "The local channel attention's reduction rate (released 2).")
      .min(1)
      .max(256)
      .only_when("stage = \"joint\"", only_joint);
  s.field("local_size", &O::local_size,
          "Side in pixels the crop is resized to for the local trunk (INPUT.LOCAL_SIZE, released "
          "112).")
      .min(1)
      .max(4096)
      .only_when("stage = \"joint\"", only_joint);
  s.field("threshold", &O::threshold,
          "The crop keeps the pixels whose min-max normalised attention, quantised to 8 bits, "
          "exceeds 255·threshold (INPUT.THRESHOLD: 0.1 in the released s2.yaml, 0.4 in "
          "defaults.py).")
      .min(0.0)
      .less_than(1.0)
      .only_when("stage = \"joint\"", only_joint);
  s.field("beta", &O::beta,
          "β of ψ_k = √β·normalize(g_k) ⊕ √(1−β)·normalize(l_k) (SOLVER.BETA, released 0.6).")
      .greater_than(0.0)
      .less_than(1.0)
      .only_when("stage = \"joint\"", only_joint);
  s.field("initial_weights", &O::initial_weights,
          "The first stage's weights, written by `wscsl export-weights <stage-1 run> --out FILE`: "
          "its condition_module entries (the attribute embedding and the global branch) replace "
          "the random initialisation, as the released --resume of s2.yaml; the local branch "
          "keeps its own. Empty: none (the second stage from scratch).")
      .path()
      .only_when("stage = \"joint\"", only_joint);
  s.check([](const O& o, FieldChecker& c) {
    if (o.reduction > o.feature_map_channels)
      c.error("reduction",
              fmt::format("leaves no hidden unit: the feature map has {} channels, fewer than {}",
                          o.feature_map_channels, o.reduction));
  });
  return s;
}

Contract AsenPp::contract_of(const Options& options) {
  Contract c;
  c.provides = {{Resource::AttentionMaps}};
  c.needs = {{Resource::FeatureMap}, {Resource::TripletConditions}};
  if (joint(options)) {
    c.needs.push_back({Resource::ItemImages});
    for (const std::string& name : kAuxTerms)
      c.provides.push_back({Resource::AuxTerm, name});
  }
  return c;
}

LocalResNetImpl::LocalResNetImpl(LocalTrunk trunk, std::int64_t input_channels)
    : stages_(*this, nn::ResidualBlock::Basic,
              trunk == LocalTrunk::Resnet34 ? std::vector<std::int64_t>{3, 4, 6}
                                            : std::vector<std::int64_t>{2, 2, 2},
              input_channels) {
  nn::he_initialise(*this);
}

AsenPp::AsenPp(const Options& options) : options_(options) {
  attributes_ = register_module(
      "attributes", torch::nn::Embedding(options.num_conditions, options.attribute_dim));
  global_ = register_module(
      "global_branch", Branch(nn::AttributeBranchSizes{options.feature_map_channels,
                                                       options.attribute_dim, options.common_dim,
                                                       options.reduction, options.embedding_dim}));
  if (joint(options)) {
    local_trunk_ =
        register_module("local_trunk", LocalResNet(options.local_trunk, options.input_channels));
    if (!options.local_weights.empty())
      nn::load_resnet_weights(*local_trunk_, options.local_weights, {"layer4.", "fc."}, {});
    local_ = register_module("local_branch", Branch(nn::AttributeBranchSizes{
                                                 local_trunk_->out_channels(),
                                                 options.attribute_dim, options.local_common_dim,
                                                 options.local_reduction, options.embedding_dim}));
    if (!options.initial_weights.empty()) load_initial_weights(options.initial_weights);
  }
}

void AsenPp::load_initial_weights(const std::string& file) {
  const std::string prefix = "condition_module.";
  nn::StateDict own;
  for (auto& [name, tensor] : nn::read_state_dict(file))
    if (starts_with(name, prefix)) own.emplace_back(name.substr(prefix.size()), tensor);
  nn::StateDictMatch match;
  match.optional = [](const std::string& name) { return starts_with(name, "local_"); };
  const std::vector<std::string> problems = nn::load_state_dict(*this, own, match);
  if (!problems.empty())
    throw DataError(fmt::format(
        "{}: not the first stage of this asen_pp ({} problem{}; write it with `wscsl "
        "export-weights <run of stage = \"global\"> --out FILE`):\n  {}",
        file, problems.size(), problems.size() == 1 ? "" : "s", fmt::join(problems, "\n  ")));
}

torch::Tensor AsenPp::attention_maps_impl(const EmbedInput& input) {
  return global_->attention(input.feature_map, attributes_->weight);
}

torch::Tensor AsenPp::local_embeddings(const torch::Tensor& images,
                                       const torch::Tensor& attention) {
  std::vector<torch::Tensor> per_attribute;
  for (std::int64_t k = 0; k < options_.num_conditions; ++k) {
    const torch::Tensor crops =
        attention_crops(images, attention.select(1, k), options_.local_size, options_.threshold);
    per_attribute.push_back(
        local_->embed(local_trunk_->forward(crops), attributes_->weight.slice(0, k, k + 1)).first);
  }
  return torch::cat(per_attribute, 1);
}

torch::Tensor AsenPp::embed_impl(const EmbedInput& input) {
  auto [global, attention] = global_->embed(input.feature_map, attributes_->weight);
  if (!joint(options_)) return nn::normalize_clamped(global, -1);
  const torch::Tensor local = local_embeddings(input.images, attention);
  return torch::cat({std::sqrt(options_.beta) * nn::normalize_clamped(global, -1),
                     std::sqrt(1 - options_.beta) * nn::normalize_clamped(local, -1)},
                    -1);
}

torch::Tensor AsenPp::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return 1 - (psi_a * psi_b).sum(-1);
}

ComparisonScores AsenPp::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  ComparisonScores s = nn::conditioned_distances(*this, items, comparisons);
  if (!joint(options_)) return s;
  // Each member's g and l under the comparison's attribute, unit vectors again.
  const ComparedItems in = gather(items, comparisons);
  const std::int64_t e = options_.embedding_dim;
  const torch::Tensor rows = torch::arange(comparisons.size(), comparisons.conditions.options());
  const auto halves = [&](const ItemFeatures& member) {
    const torch::Tensor psi = member.psi.index({rows, comparisons.conditions});  // [B, 2E]
    return std::pair{psi.narrow(-1, 0, e) / std::sqrt(options_.beta),
                     psi.narrow(-1, e, e) / std::sqrt(1 - options_.beta)};
  };
  const auto [g_a, l_a] = halves(in.first);
  const auto [g_p, l_p] = halves(in.second);
  const auto [g_n, l_n] = halves(in.third);
  const auto distance = [](const torch::Tensor& a, const torch::Tensor& b) {
    return 1 - (a * b).sum(-1);
  };
  s.aux["global_close"] = distance(g_a, g_p);
  s.aux["global_far"] = distance(g_a, g_n);
  s.aux["local_close"] = distance(l_a, l_p);
  s.aux["local_far"] = distance(l_a, l_n);
  s.aux["alignment"] = distance(g_a, l_a) + distance(g_p, l_p) + distance(g_n, l_n);
  return s;
}

}  // namespace wscsl::asen_pp

WSCSL_PLUGIN(asen_pp, "0.1.0",
             "ASEN++, attribute-specific embedding with a global and a local (cropped) branch "
             "(Dong et al., TIP 2021)") {
  registrar.add<wscsl::ConditionModule, wscsl::asen_pp::AsenPp>("asen_pp");
}
