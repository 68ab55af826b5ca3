// Small pipelines shared by the host tests.
#pragma once

#include <string>

#include "wscsl/runtime/plugin_manager.hpp"

namespace wscsl::test {

// The in-tree plugins of the build tree, loaded once per test process.
inline const Registry& in_tree_plugins() {
  static Registry* registry = [] {
    auto* r = new Registry();  // lives as long as the plugins it refers to
    std::vector<std::string> warnings;
    PluginManager(*r).load({{WSCSL_PLUGIN_DIR, "test"}}, warnings);
    return r;
  }();
  return *registry;
}

// A tiny DiscoverNet model: the [backbone], [condition_module] and [[losses]] tables.
inline std::string tiny_model() {
  return R"(
[backbone]
type = "convnet"
width = 4
depth = 2
embedding_dim = 8

[condition_module]
type = "discovernet"
pairs = 2

[[losses]]
type = "margin"
)";
}

// A DiscoverNet pipeline on a tiny Fashion-CRB that trains in seconds.
inline std::string tiny_pipeline() {
  return R"(
[dataset]
type = "fashion_crb"
train_items = 256
val_items = 96
test_items = 96
train_triplets = 160
val_triplets = 64
test_triplets = 64
)" + tiny_model() +
         R"(
[[evaluators]]
type = "triplet_accuracy"

[[evaluators]]
type = "alignment"

[trainer]
epochs = 2
batch_size = 32
lr = 0.01
seed = 3
threads = 2
select_metric = "alignment/ot_accuracy"
log_every = 1000
)";
}

// A [trainer] line for the tiny pipeline (whose last table is [trainer]) in the tests that compare
// runs bit for bit, which only the CPU promises (docs/reliability.md): on a machine with a GPU,
// "auto" would train there.
inline constexpr const char* kOnTheCpu = "device = \"cpu\"\n";

}  // namespace wscsl::test
