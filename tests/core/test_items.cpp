// Items and comparisons, what crosses the plugin boundary, and the checks ConditionModule::score
// runs on what a module is given and returns.
#include <cmath>

#include <gtest/gtest.h>

#include "wscsl/error.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/pair_scores_contract.hpp"

namespace wscsl {
namespace {

ItemFeatures three_items() {
  ItemFeatures items;
  items.phi = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {3.0f, 4.0f}});
  items.psi = items.phi.unsqueeze(1);
  items.texts["title"] = {torch::tensor({{1.0f}, {0.0f}, {2.0f}}),
                          torch::tensor({true, false, true})};
  return items;
}

TEST(Items, RowsGatherEveryFeatureInOrder) {
  const ItemFeatures rows = three_items().rows(torch::tensor({2, 0, 2}, torch::kLong));
  EXPECT_TRUE(rows.phi.equal(torch::tensor({{3.0f, 4.0f}, {1.0f, 0.0f}, {3.0f, 4.0f}})));
  EXPECT_TRUE(rows.psi.equal(rows.phi.unsqueeze(1)));
  EXPECT_TRUE(rows.texts.at("title").present.equal(torch::tensor({true, true, true})));
  EXPECT_TRUE(rows.texts.at("title").features.equal(torch::tensor({{2.0f}, {1.0f}, {2.0f}})));
}

TEST(Items, ConcatenatedPutsTheGroupsOneAfterAnother) {
  const ItemFeatures items = three_items();
  const ItemFeatures both =
      ItemFeatures::concatenated({items.rows(torch::tensor({0}, torch::kLong)),
                                  items.rows(torch::tensor({1, 2}, torch::kLong))});
  EXPECT_EQ(both.size(), 3);
  EXPECT_TRUE(both.phi.equal(items.phi));
  EXPECT_TRUE(both.texts.at("title").present.equal(items.texts.at("title").present));
}

TEST(Items, TheRowTensorOfAGroupGivesTheGroupsOwnTensors) {
  const ItemFeatures items = three_items();
  const ItemFeatures first = items.rows(torch::tensor({0}, torch::kLong));
  const ItemFeatures rest = items.rows(torch::tensor({1, 2}, torch::kLong));
  ItemFeatures both = ItemFeatures::concatenated({first, rest});
  const torch::Tensor rest_rows = torch::tensor({1, 2}, torch::kLong);
  both.groups = {{rest_rows, std::make_shared<const ItemFeatures>(rest)}};
  // That very row tensor: the group's tensors themselves, which its readers share.
  EXPECT_TRUE(both.rows(rest_rows).phi.is_same(rest.phi));
  // Equal rows in another tensor: a gathered copy of the same values.
  const ItemFeatures copy = both.rows(torch::tensor({1, 2}, torch::kLong));
  EXPECT_FALSE(copy.phi.is_same(rest.phi));
  EXPECT_TRUE(copy.phi.equal(rest.phi));
}

TEST(Comparisons, TripletsByRoleIndexTheRoleBlocks) {
  const Comparisons c = Comparisons::triplets_by_role(2, torch::kCPU);
  EXPECT_TRUE(c.first.equal(torch::tensor({0, 1}, torch::kLong)));
  EXPECT_TRUE(c.second.equal(torch::tensor({2, 3}, torch::kLong)));
  EXPECT_TRUE(c.third.equal(torch::tensor({4, 5}, torch::kLong)));
  EXPECT_TRUE(c.are_triplets());
  const Comparisons r = c.reversed();
  EXPECT_TRUE(r.second.equal(c.third));
  EXPECT_TRUE(r.third.equal(c.second));
  const Comparisons pairs = Comparisons::pairs(c.first, c.second);
  EXPECT_FALSE(pairs.are_triplets());
  EXPECT_THROW(pairs.reversed(), Error);
  EXPECT_EQ(c.slice(1, 2).size(), 1);
  EXPECT_EQ(c.slice(1, 2).third.item<std::int64_t>(), 5);
}

// Scores triplets only: its contract does not provide pair scores.
class TripletsOnly final : public ConditionModule {
 public:
  std::int64_t num_embeddings() const override { return 1; }
  std::int64_t output_dim() const override { return 2; }

 protected:
  torch::Tensor embed_impl(const torch::Tensor& phi) override { return phi.unsqueeze(1); }
  ComparisonScores score_impl(const ItemFeatures& items, const Comparisons& c) override {
    return nn::expected_distances(*this, gather(items, c), torch::ones({c.size(), 1}));
  }
};

TEST(Comparisons, AModuleScoresPairsOnlyWhenItsContractProvidesThem) {
  const ItemFeatures items = three_items();
  const Comparisons pairs =
      Comparisons::pairs(torch::tensor({0, 1}, torch::kLong), torch::tensor({2, 2}, torch::kLong));
  TripletsOnly triplets_only;
  EXPECT_THROW(triplets_only.score(items, pairs), ComponentError);
  testing::TableModule module(1, 2, {1.0});
  const ComparisonScores s = module.score(items, pairs);
  // d((1, 0), (3, 4)) = √20, d((0, 1), (3, 4)) = √18.
  EXPECT_TRUE(s.fused_second.allclose(torch::tensor({std::sqrt(20.0f), std::sqrt(18.0f)})));
  EXPECT_FALSE(s.fused_third.defined());
}

TEST(Comparisons, ScoreRefusesRowsOutsideTheItems) {
  testing::TableModule module(1, 2, {1.0});
  const Comparisons c{torch::tensor({0}, torch::kLong),
                      torch::tensor({3}, torch::kLong),
                      torch::tensor({1}, torch::kLong),
                      {}};
  try {
    module.score(three_items(), c);
    FAIL() << "row 3 of 3 items was accepted";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("second rows must lie in [0, 3)"), std::string::npos)
        << e.what();
  }
}

// Weighs a pair's two embeddings otherwise than a triplet's: what pair_scores_contract must catch.
class PairsWeighedApart final : public ConditionModule {
 public:
  PairsWeighedApart() { set_contract(testing::pair_scoring()); }
  std::int64_t num_embeddings() const override { return 2; }
  std::int64_t output_dim() const override { return 1; }

 protected:
  torch::Tensor embed_impl(const torch::Tensor& phi) override {
    return phi.reshape({phi.size(0), 2, 1});
  }
  ComparisonScores score_impl(const ItemFeatures& items, const Comparisons& c) override {
    const torch::Tensor w =
        c.are_triplets() ? torch::tensor({0.25f, 0.75f}) : torch::full({2}, 0.5f);
    return nn::expected_distances(*this, gather(items, c), w.unsqueeze(0).expand({c.size(), 2}));
  }
};

TEST(PairScoresContract, NamesEveryRuleAModuleBreaks) {
  testing::TableModule keeps(2, 1, {0.25, 0.75});
  EXPECT_EQ(testing::pair_scores_contract(keeps, testing::random_triplets(keeps, 4, 2)), "");
  PairsWeighedApart weighs_apart;
  EXPECT_EQ(
      testing::pair_scores_contract(weighs_apart, testing::random_triplets(weighs_apart, 4, 2)),
      "pair and triplet differ in fused_second\n"
      "pair and triplet differ in weights");
  TripletsOnly triplets_only;
  EXPECT_EQ(
      testing::pair_scores_contract(triplets_only, testing::random_triplets(triplets_only, 4, 2)),
      "the contract does not provide pair_scores");
}

}  // namespace
}  // namespace wscsl
