// The values the host derives while it builds a pipeline and injects into the options that ask
// for them (Schema::field(...).derived(facts::backbone_embedding_dim)). They are declared here,
// once: a schema that names any other fact is refused when its plugin registers.
#pragma once

#include <string>
#include <vector>

namespace wscsl {

struct Fact {
  const char* name;  // "backbone.embedding_dim"
  const char* doc;   // who establishes it and what it is
};

namespace facts {
inline constexpr Fact dataset_num_conditions{"dataset.num_conditions",
                                             "the number of similarity conditions of the dataset"};
inline constexpr Fact dataset_channels{"dataset.channels", "the image channels of the dataset"};
inline constexpr Fact dataset_height{"dataset.height", "the image height of the dataset"};
inline constexpr Fact dataset_width{"dataset.width", "the image width of the dataset"};
inline constexpr Fact dataset_text_features{
    "dataset.text_features",
    "the file of precomputed text features the dataset's release ships (Polyvore Outfits' "
    "train_hglmm_pca6000.txt), where it has one"};
inline constexpr Fact backbone_embedding_dim{"backbone.embedding_dim",
                                             "the size D of the backbone's embedding φ"};
inline constexpr Fact backbone_feature_map_channels{
    "backbone.feature_map_channels",
    "the channels C of the backbone's last feature map, of a backbone that provides one"};
inline constexpr Fact condition_module_num_embeddings{
    "condition_module.num_embeddings", "the number K of embeddings of the condition module"};
inline constexpr Fact condition_module_output_dim{
    "condition_module.output_dim", "the size E of each embedding ψ_k of the condition module"};
}  // namespace facts

// Every fact above, in the order the host establishes them.
const std::vector<Fact>& known_facts();
bool is_known_fact(const std::string& name);
// The known fact spelled most like `name` ("" when none is close).
std::string nearest_fact(const std::string& name);

}  // namespace wscsl
