#include "wscsl/plugin/contract.hpp"

#include <fmt/format.h>

namespace wscsl {

std::string resource_name(Resource resource) {
  switch (resource) {
    case Resource::TripletConditions:
      return "triplet_conditions";
    case Resource::ImageFactors:
      return "image_factors";
    case Resource::Outfits:
      return "outfits";
    case Resource::AttributeQueries:
      return "attribute_queries";
    case Resource::TypePairConditions:
      return "type_pair_conditions";
    case Resource::ItemText:
      return "item_text";
    case Resource::TextFeatures:
      return "text_features";
    case Resource::GaussianPosterior:
      return "gaussian_posterior";
    case Resource::AuxTerm:
      return "aux_term";
    case Resource::ReversedScores:
      return "reversed_scores";
    case Resource::TrainingImages:
      return "training_images";
    case Resource::FeatureMap:
      return "feature_map";
    case Resource::ItemImages:
      return "item_images";
    case Resource::AttentionMaps:
      return "attention_maps";
    case Resource::Alignment:
      return "alignment";
    case Resource::PairScores:
      return "pair_scores";
    case Resource::ItemType:
      return "item_type";
    case Resource::SplitTriplets:
      return "split_triplets";
    case Resource::ConditionTriplets:
      return "condition_triplets";
    case Resource::CompatibilityLines:
      return "compatibility_lines";
    case Resource::BlankQuestions:
      return "blank_questions";
    case Resource::QueryLines:
      return "query_lines";
  }
  return "unknown";
}

std::string describe_resource(Resource resource, const std::string& name) {
  switch (resource) {
    case Resource::TripletConditions:
      return "the condition of every triplet";
    case Resource::ImageFactors:
      return "the factor labels of every image";
    case Resource::Outfits:
      return "outfits (item types, compatibility lines, fill-in-the-blank questions)";
    case Resource::AttributeQueries:
      return "attribute-retrieval query and candidate lines";
    case Resource::TypePairConditions:
      return "triplet conditions that are the type pairs of the items";
    case Resource::ItemText:
      return fmt::format("the text field '{}' of every item", name);
    case Resource::TextFeatures:
      // Empty in the contract of default options whose text encoder is a required option.
      return name.empty() ? "the features of the text encoder its options name"
                          : fmt::format("the features of the text encoder '{}'", name);
    case Resource::GaussianPosterior:
      return "a Gaussian posterior [μ, log σ²] as φ (a VAE encoder backbone)";
    case Resource::AuxTerm:
      return fmt::format("the aux term '{}' of the condition module", name);
    case Resource::ReversedScores:
      return "the scores of the reversed triplets";
    case Resource::TrainingImages:
      return "the triplets' images";
    case Resource::FeatureMap:
      return "the backbone's feature map";
    case Resource::ItemImages:
      return "the images of the items it embeds";
    case Resource::AttentionMaps:
      return "per-condition attention maps over the feature map";
    case Resource::Alignment:
      return fmt::format("the alignment of embeddings with conditions ({})", name);
    case Resource::PairScores:
      return "the scores of pairs of items";
    case Resource::ItemType:
      return fmt::format("the item type '{}'", name);
    case Resource::SplitTriplets:
      return "triplets in the split it evaluates";
    case Resource::ConditionTriplets:
      return "triplets of every condition in the validation split and the split it evaluates";
    case Resource::CompatibilityLines:
      return "compatibility lines of both labels in the split it evaluates";
    case Resource::BlankQuestions:
      return "fill-in-the-blank questions in the split it evaluates";
    case Resource::QueryLines:
      return "query lines with candidates of their attribute in the split it evaluates";
  }
  return "an unknown resource";
}

bool is_split_content(Resource resource) {
  switch (resource) {
    case Resource::SplitTriplets:
    case Resource::ConditionTriplets:
    case Resource::CompatibilityLines:
    case Resource::BlankQuestions:
    case Resource::QueryLines:
      return true;
    default:
      return false;
  }
}

bool Contract::provides_resource(Resource resource, const std::string& name) const {
  for (const Provision& p : provides)
    if (p.resource == resource && p.name == name) return true;
  return false;
}

bool Contract::needs_resource(Resource resource) const {
  for (const Need& n : needs)
    if (n.resource == resource) return true;
  return false;
}

std::vector<std::string> Contract::needed_names(Resource resource) const {
  std::vector<std::string> names;
  for (const Need& n : needs)
    if (n.resource == resource) names.push_back(n.name);
  return names;
}

std::vector<std::string> Contract::provided_names(Resource resource) const {
  std::vector<std::string> names;
  for (const Provision& p : provides)
    if (p.resource == resource) names.push_back(p.name);
  return names;
}

std::vector<std::string> expand_metric_name(const std::string& pattern,
                                            const std::vector<std::string>& conditions) {
  static const std::string placeholder = "{condition}";
  const std::size_t at = pattern.find(placeholder);
  if (at == std::string::npos) return {pattern};
  std::vector<std::string> names;
  for (const std::string& c : conditions)
    names.push_back(pattern.substr(0, at) + c + pattern.substr(at + placeholder.size()));
  return names;
}

}  // namespace wscsl
