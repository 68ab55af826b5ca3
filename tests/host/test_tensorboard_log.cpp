// The hyperparameters of a pipeline as TensorBoard's HParams tab reads them
// (host/src/train/tensorboard_log.hpp).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "train/tensorboard_log.hpp"
#include "wscsl/config/toml.hpp"

using namespace wscsl;
using namespace wscsl::host;

TEST(HParams, ThePipelinesOptionsFlattenedByTheirPath) {
  const ConfigNode root = parse_toml(
      "[trainer]\nlr = 0.5\nseed = 3\nvalidate = true\n[dataset]\ntype = \"fashion_crb\"\n"
      "[[losses]]\ntype = \"margin\"\n[[losses]]\ntype = \"logistic\"\n"
      "[backbone]\nsizes = [1, 2]\n",
      "p.toml");
  const std::map<std::string, HParamValue> h = pipeline_hparams(root);
  EXPECT_EQ(h.at("trainer.lr"), HParamValue(0.5));
  EXPECT_EQ(h.at("trainer.seed"), HParamValue(3.0));
  EXPECT_EQ(h.at("trainer.validate"), HParamValue(true));
  EXPECT_EQ(h.at("dataset.type"), HParamValue(std::string("fashion_crb")));
  EXPECT_EQ(h.at("losses.1.type"), HParamValue(std::string("logistic")));
  EXPECT_EQ(h.at("backbone.sizes"), HParamValue(std::string("[1, 2]")));
}

TEST(HParams, RunsThatDifferOnlyInTheirSeedShareAGroup) {
  std::map<std::string, HParamValue> a = {{"trainer.seed", 1.0}, {"trainer.lr", 0.5}};
  std::map<std::string, HParamValue> b = {{"trainer.seed", 2.0}, {"trainer.lr", 0.5}};
  std::map<std::string, HParamValue> c = {{"trainer.seed", 1.0}, {"trainer.lr", 0.25}};
  EXPECT_EQ(hparams_group(a), hparams_group(b));
  EXPECT_NE(hparams_group(a), hparams_group(c));
}
