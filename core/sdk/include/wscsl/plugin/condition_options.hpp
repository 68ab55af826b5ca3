// The options condition modules share, each declared once with its name, bounds and source: D from
// the backbone, K from the dataset, E defaulting to D, and how masks start. A module's own
// documentation of K, E and its masks says what they are in its model.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "wscsl/config/facts.hpp"
#include "wscsl/config/limits.hpp"
#include "wscsl/config/schema.hpp"
#include "wscsl/nn/condition_masks.hpp"

namespace wscsl::condition_options {

// input_dim: D, the size of φ, set from the backbone.
template <class O>
void input_dim(Schema<O>& s, std::int64_t O::*member) {
  s.field("input_dim", member, "D, the size of φ (set from the backbone).")
      .min(1)
      .derived(facts::backbone_embedding_dim);
}

// feature_map_channels: C, the channels of the backbone's feature map, set from the backbone (a
// module that reads the map also declares Need{Resource::FeatureMap}).
template <class O>
void feature_map_channels(Schema<O>& s, std::int64_t O::*member) {
  s.field("feature_map_channels", member,
          "C, the channels of the backbone's feature map (set from the backbone).")
      .min(1)
      .derived(facts::backbone_feature_map_channels);
}

// num_embeddings: K, up to kMaxEmbeddings, by default the dataset's number of conditions.
template <class O>
void num_embeddings(Schema<O>& s, std::int64_t O::*member, std::string doc) {
  s.field("num_embeddings", member, std::move(doc))
      .min(1)
      .max(kMaxEmbeddings)
      .default_from(facts::dataset_num_conditions);
}

// num_conditions: K, one per condition of the dataset, set from it.
template <class O>
void num_conditions(Schema<O>& s, std::int64_t O::*member, std::string doc) {
  s.field("num_conditions", member, std::move(doc)).min(1).derived(facts::dataset_num_conditions);
}

// embedding_dim: E, up to kMaxLayerSize, by default D.
template <class O>
void embedding_dim(Schema<O>& s, std::int64_t O::*member, std::string doc) {
  s.field("embedding_dim", member, std::move(doc))
      .min(1)
      .max(kMaxLayerSize)
      .default_from(facts::backbone_embedding_dim);
}

// masks: the masks' initialisation, documented as nn::mask_init_doc() followed by `note`.
template <class O>
void masks(Schema<O>& s, nn::MaskInit O::*member, const std::string& note = {}) {
  s.field("masks", member, note.empty() ? nn::mask_init_doc() : nn::mask_init_doc() + " " + note,
          nn::mask_init_choices());
}

}  // namespace wscsl::condition_options
