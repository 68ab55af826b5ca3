// What a component provides to and needs from the rest of a pipeline, declared so that the host
// checks every pipeline before anything trains (`wscsl check`) and `wscsl describe` shows it.
//
// An implementation declares its contract with a static function of its options:
//
//   static wscsl::Contract contract_of(const Options& options) {
//     wscsl::Contract c;
//     c.provides = {{wscsl::Resource::AuxTerm, "mask_l1"}};
//     return c;
//   }
//
// and the interfaces hold it to the declaration while it runs (a module's aux terms, the metrics
// an evaluator reports, what a loss reads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wscsl {

enum class Resource {
  // The condition of every triplet (a dataset whose triplet lists carry it).
  TripletConditions,
  // Per-image factor labels (SplitData::factors), which retrieval judges relevance by.
  ImageFactors,
  // Outfits (SplitData::outfits): item types, compatibility lines, fill-in-the-blank questions.
  Outfits,
  // Attribute-retrieval query and candidate lines (SplitData::attribute_queries): a dataset
  // provides them.
  AttributeQueries,
  // Triplet conditions that are the type pairs of anchor and close
  // (OutfitData::type_pair_conditions),
  // which a type-aware module looks up for any pair of items.
  TypePairConditions,
  // A named text field of every item (SplitData::texts), e.g. "title": a dataset provides it.
  ItemText,
  // The features of a named text encoder of the pipeline ([[text_encoders]] name = ...), given to
  // condition modules, losses and evaluators in ItemFeatures::texts.
  TextFeatures,
  // φ is a Gaussian posterior [μ, log σ²] of 2·L values (a VAE encoder backbone).
  GaussianPosterior,
  // A named per-comparison tensor in ComparisonScores::aux (a condition module, e.g. "mask_l1").
  AuxTerm,
  // The scores of the reversed triplets (the trainer computes them for losses that need them).
  ReversedScores,
  // The triplet's images (the trainer passes them to losses that need them).
  TrainingImages,
  // The backbone's last feature map [B, C, h, w] beside φ (Backbone::embed_with_map): a backbone
  // provides it; a condition module that needs it gets it in EmbedInput::feature_map.
  FeatureMap,
  // The images of the items a condition module embeds (EmbedInput::images), for a module that
  // looks at them again (ASEN++'s local branch crops them): the host passes them.
  ItemImages,
  // Per-condition attention maps over the feature map's positions
  // (ConditionModule::attention_maps), [B, K, h, w]: a condition module provides them.
  AttentionMaps,
  // The condition ↔ embedding alignment of one strategy ("ot", "exact", "greedy"), published in
  // EvalContext::shared by an earlier evaluator.
  Alignment,
  // Scores of pairs of items (Comparisons without a third item): a condition module that can score
  // a pair on its own provides them; the outfit evaluators need them.
  PairScores,
  // A named coarse item type of an outfit dataset (DatasetInfo::item_types): checked against the
  // dataset's types when the pipeline is built (`wscsl check`); no component provides it.
  ItemType,
  // What a split must hold for an evaluator's metric. `wscsl check` and `wscsl train` (before its
  // first step) hold them against the dataset's splits the evaluator reads: the test split, and
  // the validation split if it runs during validation. No component provides them.
  // At least one triplet.
  SplitTriplets,
  // At least one triplet of every condition, in the validation split too (alignments are fitted
  // on it).
  ConditionTriplets,
  // Compatibility lines of both labels, compatible and not (an AUC needs both).
  CompatibilityLines,
  // At least one fill-in-the-blank question.
  BlankQuestions,
  // At least one attribute-retrieval query line with a candidate line of its condition.
  QueryLines,
};

// Whether a need is one of what a split must hold (SplitTriplets ... QueryLines).
bool is_split_content(Resource resource);

// "aux_term", "alignment", ...: the resource's name in `wscsl describe --json`.
std::string resource_name(Resource resource);

// "the aux term 'mask_l1' of the condition module", ...: for messages and `describe`.
std::string describe_resource(Resource resource, const std::string& name);

struct Provision {
  Resource resource;
  std::string name = {};
};

struct Need {
  Resource resource;
  std::string name = {};
  // Met without a provider by a conditioned module with one embedding per condition (embedding k
  // is condition k), as the alignment is.
  bool met_by_conditioned_module = false;
};

// A metric an evaluator reports, without the evaluator's name: "accuracy", "map/{condition}"
// (one per dataset condition). `column` is the heading of the metric in bench tables ("OT",
// "MAP {condition}"); empty keeps it out of them.
struct MetricSpec {
  std::string name;
  std::string column = {};
};

// Rows an evaluator needs in every embedding table it evaluates (the images a split's triplets
// reference, EmbeddingTable): the host counts them in each split the evaluator will see (test,
// and validation for one that runs during validation) and refuses a pipeline whose split is too
// small before anything trains. `because` names the options that set the number
// ("queries = 1000 and k = 100").
struct RowsNeed {
  std::int64_t rows = 0;
  std::string because;
};

struct Contract {
  std::vector<Provision> provides;
  std::vector<Need> needs;
  std::vector<MetricSpec> metrics;   // evaluators only
  std::vector<RowsNeed> table_rows;  // evaluators only

  bool provides_resource(Resource resource, const std::string& name) const;
  bool needs_resource(Resource resource) const;
  // The names of the needs of one kind ("mask_l1", ...).
  std::vector<std::string> needed_names(Resource resource) const;
  std::vector<std::string> provided_names(Resource resource) const;
};

// A declared metric name with "{condition}" replaced by each condition, in declaration order.
std::vector<std::string> expand_metric_name(const std::string& pattern,
                                            const std::vector<std::string>& conditions);

}  // namespace wscsl
