// Text in a pipeline: [[text_encoders]] entries read a dataset text field, and their features reach
// the condition module and losses while training (ItemFeatures::texts) and the evaluators
// (EmbeddingTable::texts).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "built_pipeline.hpp"
#include "evaluation/evaluation.hpp"
#include "pipelines.hpp"
#include "train/data_parallel.hpp"
#include "train/device_check.hpp"
#include "train/training_data.hpp"
#include "train/training_model.hpp"
#include "train/training_step.hpp"
#include "unshared_loss.hpp"
#include "wscsl/data/outfit_benchmark.hpp"
#include "wscsl/testing/image_fixtures.hpp"

using namespace wscsl;
using namespace wscsl::host;

namespace {

// The tiny embedded outfit benchmark, written once per test process.
const std::string& outfit_root() {
  static const std::string root = [] {
    static wscsl::testing::ScratchDir scratch("host_text");
    const auto dir = scratch.path() / "outfits";
    wscsl::data::ensure_outfit_benchmark(dir, {wscsl::data::OutfitPreset::Tiny, 1});
    return dir.string();
  }();
  return root;
}

// SCE-Net's pair branch reading the items' category labels through a bag of words, with the
// visual-semantic loss on their titles: every path text takes.
std::string text_pipeline(const std::string& text_encoders) {
  return fmt::format(R"(
[dataset]
type = "polyvore_outfits"
root = "{}"
image_size = 16

[backbone]
type = "convnet"
width = 4
depth = 2
embedding_dim = 8
{}
[condition_module]
type = "sce_attention"
branch = "pair"
branch_input = "visual_text"
text = "label"
num_embeddings = 3

[[losses]]
type = "margin"
margin = 0.3

[[losses]]
type = "visual_semantic"
text = "title"
weight = 5e-3

[[evaluators]]
type = "outfit_compatibility"

[trainer]
epochs = 1
batch_size = 16
optimizer = "sgd"
momentum = 0.0
seed = 1
threads = 1
)",
                     outfit_root(), text_encoders);
}

const char* kTwoEncoders = R"(
[[text_encoders]]
type = "bag_of_words"
field = "category"
name = "label"

[[text_encoders]]
type = "bag_of_words"
field = "title"
)";

Pipeline build(const std::string& text) {
  return test::built_pipeline(text);
}

// Σ |gradient| over a module's parameters (0 when none reached them).
double gradient_mass(const torch::nn::Module& module) {
  double mass = 0.0;
  for (const torch::Tensor& w : module.parameters())
    if (w.grad().defined()) mass += w.grad().abs().sum().item<double>();
  return mass;
}

std::string check_error(const std::string& text) {
  try {
    build(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Text, EncodersAreNamedAfterTheirFieldUnlessNamed) {
  const Pipeline p = build(text_pipeline(kTwoEncoders));
  ASSERT_EQ(p.text_encoders.size(), 2u);
  EXPECT_EQ(p.text_encoders[0].name, "label");
  EXPECT_EQ(p.text_encoders[0].field, "category");
  EXPECT_EQ(p.text_encoders[1].name, "title");
  const ConfigNode& resolved = *p.resolved.find("text_encoders");
  EXPECT_EQ(resolved.items()[1].find("field")->as_string(), "title");
  // The encoders are part of the model, hence of its checkpoints.
  bool found = false;
  for (const auto& named : p.model()->named_parameters())
    found = found || named.key().rfind("text_encoder_label.", 0) == 0;
  EXPECT_TRUE(found);
}

TEST(Text, ATrainingStepEncodesEachRolesTextsAndTrainsTheEncoders) {
  Pipeline p = build(text_pipeline(kTwoEncoders));
  TrainingData data(p, Placement{}, 0);
  data.start_epoch(0);
  const TripletBatch batch = data.batch(0, 0).batch;
  ASSERT_EQ(batch.texts.anchor.size(), 2u);  // one entry per field read
  const SplitData& train = p.dataset->split(Split::Train);
  ASSERT_EQ(batch.texts.anchor.at("category").size(),
            static_cast<std::size_t>(p.trainer.batch_size));
  // Each role's texts are its items' texts of the field.
  for (const std::string& text : batch.texts.close.at("category"))
    EXPECT_NE(std::find(train.texts.at("category").begin(), train.texts.at("category").end(), text),
              train.texts.at("category").end());

  TrainingModel model(p, resolve_device(p.trainer.device));
  TrainingStep step(p, model.optimizer(), p.trainer.precision);
  test::UnsharedLoss alone;
  step.take(batch, alone);
  for (const NamedTextEncoder& t : p.text_encoders)
    EXPECT_GT(gradient_mass(*t.encoder), 0.0) << "text encoder '" << t.name << "' got no gradient";
}

TEST(Text, EmbeddingTablesCarryEveryEncodersFeaturesOfEveryRow) {
  Pipeline p = build(text_pipeline(kTwoEncoders));
  const EmbeddingTable table = embed_split(p, Split::Test, 64, test::alone(p));
  const SplitData& test = p.dataset->split(Split::Test);
  ASSERT_EQ(table.items.texts.size(), 2u);
  const TextFeatures& title = table.items.texts.at("title");
  const std::int64_t rows = table.image_ids.size(0);
  ASSERT_EQ(title.features.sizes(), (std::vector<std::int64_t>{rows, 8}));
  std::int64_t absent = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::string& text =
        test.texts.at("title")[static_cast<std::size_t>(table.image_ids[r].item<std::int64_t>())];
    EXPECT_EQ(title.present[r].item<bool>(), !text.empty()) << "row " << r;
    if (text.empty()) {
      ++absent;
      EXPECT_EQ(title.features[r].abs().sum().item<double>(), 0.0);
    }
  }
  EXPECT_GT(absent, 0) << "the tiny benchmark has items without a title";
}

TEST(Text, ATextEncoderNeedsADatasetWithItsField) {
  const std::string message = check_error(test::tiny_pipeline() + R"(
[[text_encoders]]
type = "bag_of_words"
field = "title"
)");
  EXPECT_NE(message.find("[text_encoders.0]"), std::string::npos) << message;
  EXPECT_NE(message.find("needs the text field 'title' of every item, which no component before "
                         "it provides"),
            std::string::npos)
      << message;
}

TEST(Text, AModuleReadingTextNeedsTheEncoderItNames) {
  const std::string message = check_error(text_pipeline(R"(
[[text_encoders]]
type = "bag_of_words"
field = "title"
)"));
  EXPECT_NE(message.find("needs the features of the text encoder 'label'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("add [[text_encoders]] name = \"label\""), std::string::npos) << message;
}

TEST(Text, TextFeaturesLiveInPhisSpace) {
  const std::string message = check_error(text_pipeline(R"(
[[text_encoders]]
type = "bag_of_words"
field = "category"
name = "label"
output_dim = 16

[[text_encoders]]
type = "bag_of_words"
field = "title"
)"));
  EXPECT_NE(message.find("gives features of 16 values, and the backbone's embedding has 8"),
            std::string::npos)
      << message;
}

TEST(Text, AnEncoderNeedsItsFieldAndAUniqueName) {
  const std::string missing = check_error(text_pipeline(R"(
[[text_encoders]]
type = "bag_of_words"
name = "label"
)"));
  EXPECT_NE(missing.find("'field'"), std::string::npos) << missing;
  const std::string twice = check_error(text_pipeline(R"(
[[text_encoders]]
type = "bag_of_words"
field = "category"
name = "label"

[[text_encoders]]
type = "bag_of_words"
field = "title"
name = "label"
)"));
  EXPECT_NE(twice.find("a second text_encoder named 'label'"), std::string::npos) << twice;
}

TEST(Text, PrecomputedFeaturesDefaultToTheFileTheDatasetShips) {
  const Pipeline p = build(text_pipeline(R"(
[[text_encoders]]
type = "bag_of_words"
field = "category"
name = "label"

[[text_encoders]]
type = "precomputed_text"
field = "title"
)"));
  const ConfigNode& title = p.resolved.find("text_encoders")->items()[1];
  EXPECT_EQ(std::filesystem::path(title.find("file")->as_string()),
            std::filesystem::path(outfit_root()) / "nondisjoint" / "train_hglmm_pca6000.txt");
}

// A text model written in Python: the torchscript_text plugin's test model (a scripted trigram bag
// with 6 outputs), read by SCE-Net's branch and the visual-semantic loss; a training step reaches
// its parameters and the evaluation's tables hold its features.
TEST(Text, ATextModelWrittenInPythonTrainsInAPipeline) {
  static wscsl::testing::ScratchDir scratch("host_text_model");
  const std::string command = std::string(WSCSL_PYTHON) + " " + WSCSL_TEXT_MODEL_SCRIPT + " " +
                              scratch.path().string() + " > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::string text = text_pipeline(fmt::format(R"(
[[text_encoders]]
type = "torchscript_text"
field = "category"
name = "label"
file = "{}"

[[text_encoders]]
type = "bag_of_words"
field = "title"
)",
                                               (scratch.path() / "model.pt").string()));
  text.replace(text.find("embedding_dim = 8"), 17, "embedding_dim = 6");
  Pipeline p = build(text);
  TrainingData data(p, Placement{}, 0);
  data.start_epoch(0);
  TrainingModel model(p, resolve_device(p.trainer.device));
  TrainingStep step(p, model.optimizer(), p.trainer.precision);
  test::UnsharedLoss alone;
  step.take(data.batch(0, 0).batch, alone);
  EXPECT_GT(gradient_mass(*p.text_encoders[0].encoder), 0.0);
  const EmbeddingTable table = embed_split(p, Split::Test, 64, test::alone(p));
  EXPECT_EQ(table.items.texts.at("label").features.size(1), 6);
  EXPECT_TRUE(
      table.items.texts.at("label").present.all().item<bool>());  // every item has a category
}

// The trainer's device check (train/device_check.hpp) reaches every component that holds tensors:
// the text encoders, the condition module's masks and the losses, each named when one of its
// tensors is elsewhere than the model's device (the meta device here).
TEST(Text, TheDeviceCheckReachesTheEncodersTheMasksAndTheLosses) {
  const Pipeline whole = build(text_pipeline(kTwoEncoders));
  const std::vector<ModelComponent> components = model_components(whole);
  ASSERT_EQ(components.size(), 6u);  // backbone, 2 text encoders, condition module, 2 losses
  EXPECT_EQ(components[1].label, whole.text_encoders[0].encoder->label());
  EXPECT_EQ(components[2].label, whole.text_encoders[1].encoder->label());
  EXPECT_EQ(components[5].label, whole.losses[1].loss->label());
  EXPECT_NO_THROW(require_on_device(components, torch::kCPU));

  for (std::size_t i = 0; i < components.size(); ++i) {
    const Pipeline p = build(text_pipeline(kTwoEncoders));
    const std::vector<std::shared_ptr<torch::nn::Module>> modules = {
        p.backbone,         p.text_encoders[0].encoder, p.text_encoders[1].encoder,
        p.condition_module, p.losses[0].loss,           p.losses[1].loss};
    modules[i]->register_buffer("stray", torch::zeros({1}, torch::kMeta));
    try {
      require_on_device(model_components(p), torch::kCPU);
      ADD_FAILURE() << components[i].label << ": a buffer on the meta device passed the check";
    } catch (const Error& e) {
      EXPECT_NE(
          std::string(e.what()).find(components[i].label + " holds its buffer 'stray' on meta"),
          std::string::npos)
          << e.what();
    }
  }

  // A parameter in SCE-Net's masks module, made on another device.
  const Pipeline masked = build(text_pipeline(kTwoEncoders));
  masked.condition_module->named_children()["masks"]->register_parameter(
      "stray", torch::zeros({1}, torch::kMeta));
  try {
    require_on_device(model_components(masked), torch::kCPU);
    ADD_FAILURE() << "a mask parameter on the meta device passed the check";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(masked.condition_module->label() +
                                         " holds its parameter 'masks.stray' on meta"),
              std::string::npos)
        << e.what();
  }
}
