#include <gtest/gtest.h>

#include "pipeline.hpp"
#include "pipelines.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"

using namespace wscsl;
using namespace wscsl::host;

namespace {

Diagnostics build_errors(const std::string& text) {
  try {
    build_pipeline(parse_toml(text, "p.toml"), "p.toml", test::in_tree_plugins());
  } catch (const ConfigError& e) {
    return e.diagnostics();
  }
  return {};
}

}  // namespace

TEST(Pipeline, ThreeMistakesGiveThreeDiagnosticsAtTheirPositions) {
  const ConfigNode root = load_toml_file(WSCSL_TEST_DATA_DIR "/three_errors.toml");
  try {
    build_pipeline(root, "three_errors.toml", test::in_tree_plugins());
    FAIL() << "expected a configuration error";
  } catch (const ConfigError& e) {
    const auto& d = e.diagnostics();
    ASSERT_EQ(d.error_count(), 3u) << d.format();
    const std::string file = WSCSL_TEST_DATA_DIR "/three_errors.toml";
    EXPECT_EQ(d.all()[0].where.str(), file + ":4:1");
    EXPECT_EQ(d.all()[0].message,
              "unknown key 'train_tripletz' in [dataset] (dataset 'fashion_crb' (plugin "
              "fashion_crb 0.1.0))");
    EXPECT_EQ(d.all()[0].notes[0], "did you mean 'train_triplets'?");
    EXPECT_EQ(d.all()[1].where.str(), file + ":8:9");
    EXPECT_EQ(d.all()[1].message, "[backbone] 'width' expects an integer, got a string (\"wide\")");
    EXPECT_EQ(d.all()[2].where.str(), file + ":11:8");
    EXPECT_EQ(d.all()[2].message, "unknown condition_module type \"discovernett\"");
    EXPECT_EQ(d.all()[2].notes[0], "did you mean 'discovernet'?");
  }
}

TEST(Pipeline, BuildsEveryComponentAndResolvesDefaults) {
  const Pipeline p = build_pipeline(parse_toml(test::tiny_pipeline(), "p.toml"), "p.toml",
                                    test::in_tree_plugins());
  EXPECT_EQ(p.backbone->embedding_dim(), 8);
  EXPECT_EQ(p.condition_module->num_embeddings(), 4);  // from the dataset's conditions
  EXPECT_EQ(p.losses.size(), 1u);
  EXPECT_EQ(p.evaluators.size(), 2u);
  const ConfigNode* cm = p.resolved.find("condition_module");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(cm->find("input_dim")->as_integer(), 8);
  EXPECT_EQ(cm->find("temperature")->as_number(), 1.0);
  EXPECT_EQ(p.resolved.find("losses")->items()[0].find("weight")->as_number(), 1.0);
  EXPECT_EQ(p.resolved.find("trainer")->find("optimizer")->as_string(), "adam");
}

TEST(Pipeline, ResolvedTomlIsAValidPipelineThatResolvesToItself) {
  const Pipeline p = build_pipeline(parse_toml(test::tiny_pipeline(), "p.toml"), "p.toml",
                                    test::in_tree_plugins());
  const std::string text = resolved_toml(p);
  EXPECT_NE(text.find("[provenance]"), std::string::npos);
  EXPECT_NE(text.find("threads = 2"), std::string::npos);
  const Pipeline again =
      build_pipeline(parse_toml(text, "resolved.toml"), "resolved.toml", test::in_tree_plugins());
  EXPECT_EQ(again.resolved, p.resolved);
}

TEST(Pipeline, RestatedDerivedValuesMustAgree) {
  const Diagnostics d =
      build_errors(test::tiny_pipeline() + "\n[condition_module.extra]\n");  // not a valid key
  EXPECT_EQ(d.error_count(), 1u) << d.format();
  std::string text = test::tiny_pipeline();
  text.replace(text.find("pairs = 2"), 9, "pairs = 2\ninput_dim = 16");
  const Diagnostics disagree = build_errors(text);
  ASSERT_EQ(disagree.error_count(), 1u) << disagree.format();
  EXPECT_NE(disagree.all()[0].message.find("'input_dim' = 16 disagrees with "
                                           "backbone.embedding_dim = 8 (from backbone 'convnet'"),
            std::string::npos)
      << disagree.all()[0].message;
}

TEST(Pipeline, StructuralMistakesAreReported) {
  const Diagnostics d = build_errors(
      "[dataset]\ntype = \"fashion_crb\"\n[loss]\ntype = \"margin\"\n[trainer]\n"
      "select_metric = \"nope\"\n");
  const std::string all = d.format();
  EXPECT_NE(all.find("p.toml:3:2: error: unknown pipeline section 'loss'"), std::string::npos)
      << all;
  EXPECT_NE(all.find("did you mean 'losses'?"), std::string::npos);
  EXPECT_NE(all.find("the pipeline has no [backbone] table"), std::string::npos);
  EXPECT_NE(all.find("the pipeline has no [[losses]] table"), std::string::npos);

  const Diagnostics metric = build_errors(
      test::tiny_pipeline() + "\n");  // valid; now break select_metric via a second build
  EXPECT_TRUE(metric.empty()) << metric.format();
  std::string text = test::tiny_pipeline();
  text.replace(text.find("alignment/ot_accuracy"), 21, "alignmnt/ot_accuracy");
  const Diagnostics wrong = build_errors(text);
  ASSERT_EQ(wrong.error_count(), 1u) << wrong.format();
  EXPECT_EQ(wrong.all()[0].notes[0], "did you mean 'alignment/...'?");
}

TEST(Pipeline, LossWeightsAndNamesAreHostKeys) {
  std::string text = test::tiny_pipeline();
  text.replace(text.find("type = \"margin\""), 15,
               "type = \"margin\"\nweight = 0.5\nname = \"hinge\"\nmargin = 0.3");
  const Pipeline p = build_pipeline(parse_toml(text, "p.toml"), "p.toml", test::in_tree_plugins());
  EXPECT_EQ(p.losses[0].weight, 0.5);
  EXPECT_EQ(p.losses[0].name, "hinge");
  std::string bad = test::tiny_pipeline();
  bad.replace(bad.find("type = \"margin\""), 15, "type = \"margin\"\nweight = -1");
  EXPECT_EQ(build_errors(bad).error_count(), 1u);
}
