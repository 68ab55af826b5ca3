#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <torch/cuda.h>

#include "built_pipeline.hpp"
#include "distributed/placement.hpp"
#include "pipeline/pipeline.hpp"
#include "pipelines.hpp"
#include "run/provenance.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"

using namespace wscsl;
using namespace wscsl::host;

namespace {

Diagnostics build_errors(const std::string& text) {
  try {
    test::built_pipeline(text);
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
  const Pipeline p = test::built_pipeline(test::tiny_pipeline());
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

TEST(Pipeline, ASecondEvaluatorOfATypeHasItsNameInItsBenchColumns) {
  const Pipeline p = test::built_pipeline(test::tiny_pipeline() + R"(
[[evaluators]]
type = "alignment"
name = "strict"
ties = "strict"
)");
  std::map<std::string, std::string> column_of;
  for (const DeclaredMetric& m : declared_metrics(p))
    column_of[m.name] = m.column;
  EXPECT_EQ(column_of.at("alignment/gr_accuracy"), "GR");
  EXPECT_EQ(column_of.at("strict/gr_accuracy"), "GR (strict)");
  EXPECT_EQ(column_of.at("strict/ot_accuracy"),
            column_of.at("alignment/ot_accuracy") + " (strict)");
}

TEST(Pipeline, ResolvedTomlIsAValidPipelineThatResolvesToItself) {
  const Pipeline p = test::built_pipeline(test::tiny_pipeline());
  const std::string text = resolved_toml(p, place(p.trainer, World{}));
  EXPECT_NE(text.find("[provenance]"), std::string::npos);
  EXPECT_NE(text.find("threads = 2"), std::string::npos);
  EXPECT_NE(text.find("processes = 1"), std::string::npos);
  const Pipeline again = test::built_pipeline(text, "resolved.toml");
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
  EXPECT_EQ(wrong.all()[0].notes[0], "did you mean 'alignment/ot_accuracy'?");
}

namespace {

// The tiny pipeline with its [[evaluators]] replaced.
std::string with_evaluators(const std::string& evaluators, const std::string& model = "") {
  std::string text = test::tiny_pipeline();
  const std::size_t from = text.find("[[evaluators]]");
  const std::size_t to = text.find("[trainer]");
  text.replace(from, to - from, evaluators + "\n");
  const std::string select = "select_metric = \"alignment/ot_accuracy\"";
  text.replace(text.find(select), select.size(), "");
  if (!model.empty()) {
    const std::size_t m = text.find("[backbone]");
    const std::size_t e = text.find(evaluators);
    text.replace(m, e - m, model + "\n");
  }
  return text;
}

std::size_t line_of(const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + at, '\n'));
}

}  // namespace

TEST(Contracts, SelectMetricMustBeADeclaredMetric) {
  std::string text = test::tiny_pipeline();
  text.replace(text.find("alignment/ot_accuracy"), 21, "alignment/nope");
  const Diagnostics d = build_errors(text);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_EQ(d.all()[0].where.line, line_of(text, "select_metric"));
  EXPECT_EQ(d.all()[0].message,
            "[trainer] 'select_metric' = \"alignment/nope\" is not a metric of the pipeline's "
            "evaluators (\"<evaluator name>/<metric>\")");
  EXPECT_NE(d.all()[0].notes.back().find("alignment/ot_accuracy"), std::string::npos);
  EXPECT_NE(d.all()[0].notes.back().find("triplet_accuracy/accuracy/color"), std::string::npos);
}

TEST(Contracts, RetrievalWithoutAnAlignmentIsReportedAtItsTable) {
  const std::string text = with_evaluators(
      "[[evaluators]]\ntype = \"triplet_accuracy\"\n\n[[evaluators]]\n"
      "type = \"retrieval\"\n");
  const Diagnostics d = build_errors(text);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  const std::size_t line = line_of(text, "type = \"retrieval\"") - 1;
  EXPECT_EQ(d.all()[0].where.line, line);
  EXPECT_NE(d.all()[0].message.find("[evaluators.1] (evaluator 'retrieval'"), std::string::npos)
      << d.all()[0].message;
  EXPECT_NE(d.all()[0].message.find("needs the alignment of embeddings with conditions (ot), "
                                    "which no component before it provides"),
            std::string::npos)
      << d.all()[0].message;
  EXPECT_EQ(d.all()[0].notes[0],
            "add [[evaluators]] type = \"alignment\" before line " + std::to_string(line));

  // After an alignment evaluator, the same table is fine; before it, it is not.
  EXPECT_TRUE(build_errors(with_evaluators("[[evaluators]]\ntype = \"alignment\"\n\n"
                                           "[[evaluators]]\ntype = \"retrieval\"\n"))
                  .empty());
  EXPECT_EQ(build_errors(with_evaluators("[[evaluators]]\ntype = \"retrieval\"\n\n"
                                         "[[evaluators]]\ntype = \"alignment\"\n"))
                .error_count(),
            1u);
}

TEST(Contracts, AConditionedModuleNeedsNoAlignment) {
  const std::string model =
      "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 2\nembedding_dim = 8\n\n"
      "[condition_module]\ntype = \"csn_masks\"\n\n[[losses]]\ntype = \"margin\"\n";
  const Diagnostics d =
      build_errors(with_evaluators("[[evaluators]]\ntype = \"retrieval\"\n", model));
  EXPECT_TRUE(d.empty()) << d.format();
}

TEST(Contracts, ALossNeedingMaskNormsNeedsAModuleThatHasThem) {
  std::string text = test::tiny_pipeline();
  text.replace(text.find("type = \"margin\""), 15,
               "type = \"margin\"\n\n[[losses]]\ntype = \"csn_regularizers\"");
  const Diagnostics d = build_errors(text);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_EQ(d.all()[0].where.line, line_of(text, "type = \"csn_regularizers\"") - 1);
  EXPECT_NE(d.all()[0].message.find("needs the aux term 'mask_l1' of the condition module"),
            std::string::npos)
      << d.all()[0].message;
  EXPECT_NE(d.all()[0].notes[0].find("a [condition_module] type that provides it: "),
            std::string::npos)
      << d.all()[0].notes[0];
  EXPECT_NE(d.all()[0].notes[0].find("csn_masks"), std::string::npos);
}

TEST(Contracts, AModuleThatNeedsTheFeatureMapIsRefusedWithABackboneThatHasNone) {
  for (const std::string module : {"asen", "asen_pp"}) {
    const std::string model =
        "[backbone]\ntype = \"vae_encoder\"\n\n[condition_module]\ntype = \"" + module +
        "\"\n\n[[losses]]\ntype = \"margin\"\n";
    const std::string text =
        with_evaluators("[[evaluators]]\ntype = \"triplet_accuracy\"\n", model);
    const Diagnostics d = build_errors(text);
    ASSERT_EQ(d.error_count(), 1u) << d.format();
    EXPECT_EQ(d.all()[0].where.line, line_of(text, "[condition_module]"));
    const std::string& message = d.all()[0].message;
    EXPECT_EQ(message.find("[condition_module] (condition_module '" + module + "'"), 0u) << message;
    EXPECT_NE(message.find("needs the backbone's feature map, and [backbone] (backbone "
                           "'vae_encoder'"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("provides none"), std::string::npos) << message;
    ASSERT_EQ(d.all()[0].notes.size(), 1u);
    EXPECT_EQ(d.all()[0].notes[0].find("use a [backbone] type that provides it: "), 0u);
    for (const char* type : {"convnet", "resnet18_trunk", "resnet50_trunk"})
      EXPECT_NE(d.all()[0].notes[0].find(type), std::string::npos) << d.all()[0].notes[0];
    // With the convnet, which provides its map, the same module builds.
    const std::string convnet =
        "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 2\n\n[condition_module]\n"
        "type = \"" +
        module + "\"\n\n[[losses]]\ntype = \"margin\"\n";
    EXPECT_TRUE(
        build_errors(with_evaluators("[[evaluators]]\ntype = \"triplet_accuracy\"\n", convnet))
            .empty())
        << module;
  }
}

// ASEN++'s second-stage loss reads terms only the joint stage publishes: with the first stage's
// module, `check` names every missing term at the loss in one error, and its first note the key
// that makes the module publish them.
TEST(Contracts, AsenPpJointLossNeedsTheJointStageAndCheckSaysWhichKeyToSet) {
  const std::string model =
      "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 2\n\n[condition_module]\n"
      "type = \"asen_pp\"\nstage = \"global\"\n\n[[losses]]\ntype = \"asen_pp_joint\"\n";
  const std::string text = with_evaluators("[[evaluators]]\ntype = \"triplet_accuracy\"\n", model);
  const Diagnostics d = build_errors(text);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_EQ(d.all()[0].where.line, line_of(text, "type = \"asen_pp_joint\"") - 1);
  EXPECT_NE(d.all()[0].message.find(
                "needs the aux term 'global_close' of the condition module, the aux term "
                "'global_far' of the condition module, the aux term 'local_close' of the "
                "condition module, the aux term 'local_far' of the condition module and the aux "
                "term 'alignment' of the condition module, which no component before it provides"),
            std::string::npos)
      << d.format();
  ASSERT_FALSE(d.all()[0].notes.empty());
  const std::string& note = d.all()[0].notes[0];
  EXPECT_EQ(note.find("set condition_module.stage = \"joint\" ([condition_module] at line " +
                      std::to_string(line_of(text, "[condition_module]")) +
                      "): condition_module 'asen_pp' (plugin asen_pp "),
            0u)
      << note;
  EXPECT_NE(note.find(") provides what is needed only with that value"), std::string::npos) << note;
  // The joint stage publishes them: the same pipeline builds.
  std::string joint = text;
  joint.replace(joint.find("stage = \"global\""), 16, "stage = \"joint\"");
  EXPECT_TRUE(build_errors(joint).empty()) << build_errors(joint).format();
}

namespace {

// The tiny pipeline with `groups` ([[trainer.parameter_groups]] tables) after its [trainer].
std::string with_groups(const std::string& groups) {
  return test::tiny_pipeline() + "\n" + groups;
}

}  // namespace

TEST(ParameterGroups, APrefixThatHoldsNoParameterIsRefusedAtItsValueNamingTheModules) {
  const std::string text = with_groups(
      "[[trainer.parameter_groups]]\nprefixes = [\"backbone\", \"condition_modul\"]\nlr = 0.1\n");
  const Diagnostics d = build_errors(text);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_EQ(d.all()[0].where.line, line_of(text, "condition_modul\""));
  EXPECT_EQ(d.all()[0].where.column,
            text.substr(text.rfind('\n', text.find("\"condition_modul\"")) + 1)
                    .find("\"condition_modul\"") +
                1);
  EXPECT_EQ(d.all()[0].message,
            "[trainer.parameter_groups.0] 'prefixes' \"condition_modul\" holds no trainable "
            "parameter of the model (expected a module path such as \"backbone\" or "
            "\"condition_module\": a parameter is held when its name is the path or starts with it "
            "and a dot)");
  ASSERT_EQ(d.all()[0].notes.size(), 2u);
  EXPECT_EQ(d.all()[0].notes[0], "did you mean \"condition_module\"?");
  EXPECT_EQ(d.all()[0].notes[1].find("the model's modules with trainable parameters include: "
                                     "backbone."),
            0u)
      << d.all()[0].notes[1];
  // A path holds only whole components: "backbone.conv" is not a prefix of backbone.convs.
  EXPECT_FALSE(under_prefix("backbone.convs.0.weight", "backbone.conv"));
  EXPECT_TRUE(under_prefix("backbone.convs.0.weight", "backbone.convs"));
  EXPECT_TRUE(under_prefix("backbone.scale", "backbone.scale"));
}

TEST(ParameterGroups, AParameterTwoGroupsHoldIsRefusedNamingBoth) {
  const std::string text = with_groups(
      "[[trainer.parameter_groups]]\nprefixes = [\"condition_module\"]\nlr = 0.1\n\n"
      "[[trainer.parameter_groups]]\nprefixes = [\"backbone\", \"condition_module.pairs\"]\n"
      "lr = 0.2\n");
  const Pipeline p = test::built_pipeline(test::tiny_pipeline());
  std::string held;  // the first trainable condition-module parameter, which both groups hold
  for (const auto& t : p.model()->named_parameters())
    if (t.key().rfind("condition_module.", 0) == 0 && t.value().requires_grad() && held.empty())
      held = t.key();
  ASSERT_FALSE(held.empty());
  const std::string path = held.substr(0, held.find('.', held.find('.') + 1));
  std::string overlapping = text;
  overlapping.replace(overlapping.find("condition_module.pairs"), 22, path);
  const Diagnostics d = build_errors(overlapping);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_EQ(d.all()[0].where.line, line_of(overlapping, "\"" + path + "\""));
  EXPECT_EQ(d.all()[0].message,
            "[trainer.parameter_groups.1] 'prefixes' \"" + path + "\" holds the parameter " + held +
                ", which [trainer.parameter_groups.0] \"condition_module\" holds already: a "
                "parameter trains at one learning rate, so the groups' prefixes must not overlap");
}

TEST(ParameterGroups, TheTablesAreBoundStrictly) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[trainer]\nparameter_groups = 3\n",
       "[trainer] 'parameter_groups' must be an array of tables, written "
       "[[trainer.parameter_groups]], got an integer"},
      {"[[trainer.parameter_groups]]\nprefixes = [\"backbone\"]\n",
       "[trainer.parameter_groups.0] is missing required key 'lr'"},
      {"[[trainer.parameter_groups]]\nprefixes = []\nlr = 0.1\n",
       "[trainer.parameter_groups.0] 'prefixes': names no module path; name at least one"},
      {"[[trainer.parameter_groups]]\nprefixes = [\"backbone\"]\nlr = 0.0\n",
       "[trainer.parameter_groups.0] 'lr' must be in (0, "},
      {"[[trainer.parameter_groups]]\nprefixes = [\"backbone\"]\nlr = 0.1\nweight_decay = 0.0\n",
       "unknown key 'weight_decay' in [trainer.parameter_groups.0]"},
  };
  for (const auto& [groups, expected] : cases) {
    std::string text = groups.rfind("[trainer]", 0) == 0 ? test::tiny_pipeline() + groups.substr(10)
                                                         : with_groups(groups);
    const Diagnostics d = build_errors(text);
    ASSERT_EQ(d.error_count(), 1u) << groups << d.format();
    EXPECT_NE(d.all()[0].message.find(expected), std::string::npos) << groups << d.all()[0].message;
  }
}

// The resolved pipeline (a run's resolved.toml) holds the groups, and builds the same ones again.
TEST(ParameterGroups, TheResolvedPipelineHoldsTheGroups) {
  const Pipeline p = test::built_pipeline(
      with_groups("[[trainer.parameter_groups]]\nprefixes = [\"condition_module\"]\nlr = 0.5\n"));
  ASSERT_EQ(p.trainer.parameter_groups.size(), 1u);
  const std::string resolved = to_toml(p.resolved);
  EXPECT_NE(resolved.find("[[trainer.parameter_groups]]"), std::string::npos) << resolved;
  const Pipeline again = test::built_pipeline(resolved, "resolved.toml");
  ASSERT_EQ(again.trainer.parameter_groups.size(), 1u);
  EXPECT_EQ(again.trainer.parameter_groups[0].prefixes,
            std::vector<std::string>{"condition_module"});
  EXPECT_EQ(again.trainer.parameter_groups[0].lr, 0.5);
  // Without groups, the resolved [trainer] has no such key.
  EXPECT_EQ(to_toml(test::built_pipeline(test::tiny_pipeline()).resolved).find("parameter_groups"),
            std::string::npos);
}

TEST(Contracts, LossesGetOnlyWhatTheyNeed) {
  std::string text = test::tiny_pipeline();
  text.replace(text.find("type = \"margin\""), 15,
               "type = \"margin\"\n\n[[losses]]\ntype = \"semantic_regularizer\"");
  const Pipeline p = test::built_pipeline(text);
  EXPECT_TRUE(p.losses_need(Resource::ReversedScores));
  EXPECT_FALSE(p.losses_need(Resource::TrainingImages));
  EXPECT_FALSE(p.losses[0].loss->contract().needs_resource(Resource::ReversedScores));
}

// Every number is finite, and counts and sizes are bounded, so that an absurd value is one
// sentence from `check` rather than a hang or an allocation failure while building the model.
TEST(Pipeline, NumbersAreFiniteAndThreadsBounded) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"trainer.lr=inf", "'lr' must be a finite number, got inf"},
      {"trainer.lr=nan", "'lr' must be a finite number, got nan"},
      {"losses.0.margin=-inf", "'margin' must be a finite number, got -inf"},
      {"trainer.threads=100000", "'threads' must be in [0, 256], got 100000"},
      {"dataset.train_triplets=9223372036854775807",
       "'train_triplets' must be in [1, 20000000], got 9223372036854775807"},
      {"trainer.lr=1e300", "'lr' must be in (0, 3.4028234663852886e+38], got 1e+300"},
      {"backbone.width=100000000", "'width' must be in [1, 4096], got 100000000"},
      {"condition_module.num_embeddings=5000", "'num_embeddings' must be in [1, 1024], got 5000"}};
  for (const auto& [assignment, expected] : cases) {
    ConfigNode root = parse_toml(test::tiny_pipeline(), "p.toml");
    Diagnostics overridden;
    apply_override(root, assignment, overridden);
    ASSERT_FALSE(overridden.has_errors()) << overridden.format();
    try {
      build_pipeline(root, "p.toml", test::in_tree_plugins());
      ADD_FAILURE() << assignment << " was accepted";
    } catch (const ConfigError& e) {
      ASSERT_EQ(e.diagnostics().error_count(), 1u) << e.diagnostics().format();
      EXPECT_NE(e.diagnostics().all()[0].message.find(expected), std::string::npos)
          << e.diagnostics().all()[0].message;
      EXPECT_EQ(e.diagnostics().all()[0].where.file, "--set " + assignment);
    }
  }
}

TEST(Pipeline, TrainerEnumerationsAndHostKeysAreChecked) {
  std::string text = test::tiny_pipeline();
  text.replace(text.find("[trainer]"), 9, "[trainer]\noptimizer = \"adamw\"");
  const Diagnostics d = build_errors(text);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_EQ(d.all()[0].message, "[trainer] 'optimizer' has no choice \"adamw\"");
  EXPECT_EQ(d.all()[0].notes[0], "did you mean 'adam'?");

  std::string named = test::tiny_pipeline();
  named.replace(named.find("type = \"margin\""), 15, "type = \"margin\"\nname = \"Hinge Loss\"");
  const Diagnostics bad_name = build_errors(named);
  ASSERT_EQ(bad_name.error_count(), 1u) << bad_name.format();
  EXPECT_EQ(bad_name.all()[0].message, "[losses.0] 'name': must be lower_snake_case text");
}

namespace {

// The tiny pipeline with `device = <spelled>` as the first key of [trainer], on line `line`.
std::pair<std::string, std::size_t> with_device(const std::string& spelled) {
  std::string text = test::tiny_pipeline();
  const std::size_t at = text.find("[trainer]");
  text.replace(at, 9, "[trainer]\ndevice = " + spelled);
  const auto line = static_cast<std::size_t>(std::count(text.begin(), text.begin() + at, '\n')) + 2;
  return {text, line};
}

}  // namespace

TEST(Pipeline, TrainerDeviceAcceptsItsFormsAndNamesThemWhenMisspelled) {
  for (const char* spelled : {"\"gpu\"", "\"cuda:x\"", "\"cuda:\"", "\"cuda:-1\"", "\"CPU\""}) {
    const auto [text, line] = with_device(spelled);
    const Diagnostics d = build_errors(text);
    ASSERT_EQ(d.error_count(), 1u) << spelled << "\n" << d.format();
    EXPECT_EQ(d.all()[0].where.str(), "p.toml:" + std::to_string(line) + ":10");
    EXPECT_EQ(d.all()[0].message, std::string("[trainer] 'device' must be \"auto\", \"cpu\", "
                                              "\"cuda\" or \"cuda:N\", got ") +
                                      spelled);
  }
  const Diagnostics wrong_type = build_errors(with_device("0").first);
  ASSERT_EQ(wrong_type.error_count(), 1u);
  EXPECT_EQ(wrong_type.all()[0].message, "[trainer] 'device' expects a string, got an integer (0)");

  for (const char* spelled : {"cpu", "auto"}) {
    const auto [text, line] = with_device("\"" + std::string(spelled) + "\"");
    const Pipeline p = test::built_pipeline(text);
    EXPECT_EQ(p.resolved.find("trainer")->find("device")->as_string(), spelled);
  }
  const Pipeline cpu = test::built_pipeline(with_device("\"cpu\"").first);
  EXPECT_EQ(resolve_device(cpu.trainer.device), torch::Device(torch::kCPU));
  const Pipeline automatic = test::built_pipeline(test::tiny_pipeline());
  EXPECT_EQ(automatic.trainer.device.kind, DeviceKind::Auto);
  EXPECT_EQ(resolve_device(automatic.trainer.device).type(),
            torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);

  TrainerOptions second_gpu;
  second_gpu.device = {DeviceKind::Cuda, 1};
  EXPECT_EQ(TrainerOptions::schema().to_config(second_gpu).find("device")->as_string(), "cuda:1");
}

// A GPU the process cannot use is one sentence from `check`, not a crash once training starts.
TEST(Pipeline, AnUnavailableGpuIsOneDiagnosticAtTheDeviceKey) {
  const std::size_t gpus = torch::cuda::is_available() ? torch::cuda::device_count() : 0;
  const std::string beyond = "cuda:" + std::to_string(gpus + 11);
  std::vector<std::string> unavailable = {beyond};
  if (gpus == 0) unavailable.push_back("cuda");
  for (const std::string& spelled : unavailable) {
    const auto [text, line] = with_device("\"" + spelled + "\"");
    const Diagnostics d = build_errors(text);
    ASSERT_EQ(d.error_count(), 1u) << spelled << "\n" << d.format();
    EXPECT_EQ(d.all()[0].where.str(), "p.toml:" + std::to_string(line) + ":10");
    const std::string& message = d.all()[0].message;
    EXPECT_EQ(message.rfind("[trainer] 'device': \"" + spelled + "\" ", 0), 0u) << message;
    if (gpus == 0)
      EXPECT_NE(message.find("use \"cpu\" or \"auto\""), std::string::npos) << message;
    else
      EXPECT_NE(message.find("names GPU " + std::to_string(gpus + 11)), std::string::npos)
          << message;
  }
}

// NCCL where the model is on a GPU and NCCL is built in, unless Gloo is asked for.
TEST(Pipeline, TheCollectiveBackendFollowsTheDevice) {
  TrainerOptions o;
  o.device = {DeviceKind::Cpu, -1};
  EXPECT_EQ(place(o, World{}).collective_backend, CollectiveBackend::Gloo);
  o.collective_backend = CollectiveBackendSetting::Gloo;
  EXPECT_EQ(place(o, World{}).collective_backend, CollectiveBackend::Gloo);
  o.collective_backend = CollectiveBackendSetting::Nccl;
  EXPECT_EQ(place(o, World{}).collective_backend, CollectiveBackend::Nccl);
  if (torch::cuda::device_count() == 0) return;
  o.device = {DeviceKind::Cuda, 0};
  o.collective_backend = CollectiveBackendSetting::Auto;
  EXPECT_EQ(place(o, World{}).collective_backend,
            nccl_built_in() ? CollectiveBackend::Nccl : CollectiveBackend::Gloo);
  o.collective_backend = CollectiveBackendSetting::Gloo;
  EXPECT_EQ(place(o, World{}).collective_backend, CollectiveBackend::Gloo);
}

// The processes of one machine share its cores and, where the device names no GPU, take GPU
// LOCAL_RANK; [trainer] itself is left as the pipeline wrote it.
TEST(Placement, ResolvedOnceFromTheTrainerAndTheJob) {
  TrainerOptions o;
  o.device = {DeviceKind::Cpu, -1};
  World two;
  two.size = 2;
  two.local_size = 2;
  two.rank = two.local_rank = 1;
  const Placement shared = place(o, two);
  EXPECT_EQ(shared.processes, 2);
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(shared.cores, std::max(1, hardware / 2));
  EXPECT_EQ(shared.threads, shared.cores);
  EXPECT_EQ(shared.device, torch::Device(torch::kCPU));
  // How long the process waits for the others is resolved with the rest, for its communicator.
  EXPECT_EQ(shared.timeouts.rendezvous, std::chrono::seconds(o.rendezvous_timeout_s));
  EXPECT_EQ(shared.timeouts.collective, std::chrono::seconds(o.collective_timeout_s));
  EXPECT_EQ(o.threads, 0);
  o.threads = 3;
  EXPECT_EQ(place(o, two).threads, 3);
  EXPECT_EQ(place(o, World{}).processes, 1);

  o.device = {DeviceKind::Cuda, -1};
  World beyond = two;
  beyond.local_rank = static_cast<int>(torch::cuda::device_count());
  try {
    place(o, beyond);
    FAIL() << "a process was placed on a GPU that is not there";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("visible GPU(s)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(o.device.kind, DeviceKind::Cuda);
  EXPECT_EQ(o.device.index, -1);
}

TEST(Pipeline, LossWeightsAndNamesAreHostKeys) {
  std::string text = test::tiny_pipeline();
  text.replace(text.find("type = \"margin\""), 15,
               "type = \"margin\"\nweight = 0.5\nname = \"hinge\"\nmargin = 0.3");
  const Pipeline p = test::built_pipeline(text);
  EXPECT_EQ(p.losses[0].weight, 0.5);
  EXPECT_EQ(p.losses[0].name, "hinge");
  std::string bad = test::tiny_pipeline();
  bad.replace(bad.find("type = \"margin\""), 15, "type = \"margin\"\nweight = -1");
  EXPECT_EQ(build_errors(bad).error_count(), 1u);
}

namespace {

// "p.toml:LINE:COLUMN" of the first occurrence of `needle` in `text`.
std::string position_of(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const std::size_t line_start = text.rfind('\n', at);
  const std::size_t column = line_start == std::string::npos ? at + 1 : at - line_start;
  return fmt::format("p.toml:{}:{}", line + 1, column);
}

// Each expected (position, start of the message) is among the diagnostics, and nothing else is.
void expect_exactly(const Diagnostics& d,
                    const std::vector<std::pair<std::string, std::string>>& expected) {
  EXPECT_EQ(d.all().size(), expected.size()) << d.format();
  for (const auto& [where, message] : expected) {
    const bool found = std::any_of(d.all().begin(), d.all().end(), [&](const Diagnostic& x) {
      return x.where.str() == where && x.message.rfind(message, 0) == 0;
    });
    EXPECT_TRUE(found) << "missing at " << where << ": " << message << "\n" << d.format();
  }
}

}  // namespace

// Host keys and a component's own keys are bound side by side: a wrong `weight` does not hide a
// misspelled option of the same table, and mistakes in other tables are all reported too.
TEST(Pipeline, EveryMistakeOfEveryTableIsReportedAtItsPlace) {
  const std::string text = R"([dataset]
type = "fashion_crb"
train_tripletz = 1000
val_items = "many"
test_items = 0

[backbone]
type = "convnet"
width = 4.5

[condition_module]
type = "discovernet"

[[losses]]
type = "margin"
margn = 0.2
weight = "heavy"
name = 3

[[evaluators]]
type = "alignment"
fit_on = "val"
ties = "halves"

[trainer]
optimizer = "adam"
momentum = 0.9
)";
  expect_exactly(
      build_errors(text),
      {{position_of(text, "train_tripletz"), "unknown key 'train_tripletz' in [dataset]"},
       {position_of(text, "\"many\""), "[dataset] 'val_items' expects an integer"},
       {position_of(text, "0\n\n[backbone]"), "[dataset] 'test_items' must be in"},
       {position_of(text, "4.5"), "[backbone] 'width' expects an integer"},
       {position_of(text, "margn"), "unknown key 'margn' in [losses.0]"},
       {position_of(text, "\"heavy\""), "[losses.0] 'weight' expects a float"},
       {position_of(text, "3\n"), "[losses.0] 'name' expects a string"},
       {position_of(text, "\"halves\""), "[evaluators.0] 'ties' has no choice \"halves\""},
       {position_of(text, "fit_on"), "unknown key 'fit_on' in [evaluators.0]"},
       {position_of(text, "0.9"), "[trainer] 'momentum' = 0.9 has no effect"}});
}

// An option that the other settings make inert is refused at its line, naming the setting that
// would make it count; a select_metric with validation off is only a warning (a common quick run).
TEST(Pipeline, AnOptionWithoutEffectIsReportedAtItsLine) {
  const auto with_trainer = [](const std::string& keys) {
    std::string text = test::tiny_pipeline();
    text.replace(text.find("[trainer]"), 9, "[trainer]\n" + keys);
    return text;
  };
  const std::vector<std::tuple<std::string, std::string, std::string>> inert = {
      {"momentum = 0.5", "0.5",
       "[trainer] 'momentum' = 0.5 has no effect: it is read only with "
       "optimizer = \"sgd\""},
      {"optimizer = \"sgd\"\nbeta2 = 0.99", "0.99",
       "[trainer] 'beta2' = 0.99 has no effect: it is read only with optimizer = \"adam\""},
      {"step_size = 3", "3\n",
       "[trainer] 'step_size' = 3 has no effect: it is read only with lr_schedule = \"step\""},
      {"lr_schedule = \"exponential\"\nstep_size = 3", "3\n",
       "[trainer] 'step_size' = 3 has no effect: it is read only with lr_schedule = \"step\""},
      {"gamma = 0.5", "0.5",
       "[trainer] 'gamma' = 0.5 has no effect: it is read only with lr_schedule = \"step\" or "
       "\"exponential\""}};
  for (const auto& [keys, value, message] : inert) {
    const std::string text = with_trainer(keys);
    const Diagnostics d = build_errors(text);
    ASSERT_EQ(d.error_count(), 1u) << keys << "\n" << d.format();
    EXPECT_EQ(d.all()[0].message, message);
    EXPECT_EQ(d.all()[0].where.str(), position_of(text, value));
  }
  std::string no_metric = test::tiny_pipeline();
  no_metric.replace(no_metric.find("select_metric"), 13, "select_mode = \"min\"\n# select_metric");
  const Diagnostics d = build_errors(no_metric);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_EQ(
      d.all()[0].message,
      "[trainer] 'select_mode' = \"min\" has no effect: it is read only with a select_metric");

  const std::string quick = with_trainer("validate = false");
  const Pipeline p = test::built_pipeline(quick);
  ASSERT_EQ(p.warnings.all().size(), 1u) << p.warnings.format();
  EXPECT_EQ(p.warnings.all()[0].severity, Diagnostic::Severity::Warning);
  EXPECT_EQ(p.warnings.all()[0].where.str(), position_of(quick, "\"alignment/ot_accuracy\""));
  EXPECT_EQ(p.warnings.all()[0].message,
            "[trainer] 'select_metric' = \"alignment/ot_accuracy\" has no effect: it is read only "
            "with validate = true");
  // What has no effect is not recorded as if it had one.
  const ConfigNode* trainer = p.resolved.find("trainer");
  EXPECT_EQ(trainer->find("select_metric"), nullptr);
  EXPECT_EQ(trainer->find("momentum"), nullptr);   // Adam
  EXPECT_EQ(trainer->find("step_size"), nullptr);  // constant schedule
  EXPECT_NE(trainer->find("beta1"), nullptr);
}

TEST(Pipeline, ABatchLargerThanTheTrainingSplitIsRefusedWithBothNumbers) {
  std::string text = test::tiny_pipeline();
  text.replace(text.find("batch_size = 32"), 15, "batch_size = 161");
  const Diagnostics d = build_errors(text);
  ASSERT_EQ(d.error_count(), 1u) << d.format();
  EXPECT_EQ(d.all()[0].where.str(), position_of(text, "161"));
  EXPECT_EQ(d.all()[0].message,
            "[trainer] 'batch_size' = 161 is larger than the training split, which holds 160 "
            "triplets");
}

// Runs recorded before options could be inert hold every option in resolved.toml (with its
// [provenance]); eval and resume still open them, and the record is rewritten without them.
TEST(Pipeline, AnEarlierRunsRecordWithOptionsThatAreNotReadStillOpens) {
  std::string text = test::tiny_pipeline();
  text.replace(text.find("[trainer]"), 9, "[trainer]\nmomentum = 0.9\nstep_size = 30");
  text += "\n[provenance]\nwscsl = \"0.1.0\"\n";
  const Pipeline p = test::built_pipeline(text, "resolved.toml");
  EXPECT_TRUE(p.warnings.empty()) << p.warnings.format();
  EXPECT_EQ(p.resolved.find("trainer")->find("momentum"), nullptr);
}
