// Items and comparisons, what crosses the plugin boundary, and the checks ConditionModule::score
// and ::embed and Backbone::embed_with_map run on what a component is given and returns.
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "wscsl/error.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/plugin/backbone.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/pair_scores_contract.hpp"

namespace wscsl {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ComponentError& e) {
    return e.what();
  }
  return "";
}

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

// Two triplets laid out by role over items held in three blocks, one per role.
struct ByRole {
  std::vector<ItemFeatures> roles;
  ItemBlocks items;
  Comparisons triplets;
};
ByRole by_role() {
  ByRole t;
  for (int role = 0; role < 3; ++role) {
    ItemFeatures r;
    r.phi = torch::randn({2, 3});
    r.psi = r.phi.unsqueeze(1);
    r.texts["title"] = {torch::randn({2, 1}), torch::tensor({true, role != 1})};
    t.roles.push_back(r);
  }
  t.items = ItemBlocks(t.roles);
  t.triplets = Comparisons::triplets_by_role(2, torch::kCPU);
  return t;
}

TEST(Items, GatherGivesEachRoleItsBlocksOwnTensors) {
  const ByRole t = by_role();
  const ComparedItems in = gather(t.items, t.triplets);
  EXPECT_TRUE(in.first.phi.is_same(t.roles[0].phi));
  EXPECT_TRUE(in.second.psi.is_same(t.roles[1].psi));
  EXPECT_TRUE(in.third.texts.at("title").features.is_same(t.roles[2].texts.at("title").features));
  // Reversed triplets swap the blocks of the second and third members.
  const ComparedItems reversed = gather(t.items, t.triplets.reversed());
  EXPECT_TRUE(reversed.second.phi.is_same(t.roles[2].phi));
  EXPECT_TRUE(reversed.third.phi.is_same(t.roles[1].phi));
  // A slice of the triplets reads the same rows of each block, as views of the block's tensors.
  const ComparedItems second_only = gather(t.items, t.triplets.slice(1, 5));
  ASSERT_EQ(second_only.third.size(), 1);
  EXPECT_EQ(second_only.third.phi.data_ptr<float>(), t.roles[2].phi[1].data_ptr<float>());
  EXPECT_TRUE(second_only.first.texts.at("title").present.equal(torch::tensor({true})));
  EXPECT_FALSE(second_only.second.texts.at("title").present.item<bool>());
}

TEST(Items, GatherCopiesRowsOfOneBlockOrWithoutALayout) {
  const ByRole t = by_role();
  const ItemBlocks by_row(ItemFeatures::concatenated(t.roles));
  const ComparedItems copied = gather(by_row, t.triplets);
  EXPECT_FALSE(copied.first.phi.is_same(t.roles[0].phi));
  EXPECT_TRUE(copied.first.phi.equal(t.roles[0].phi));
  // The same rows given by hand declare no layout: a gathered copy of the same values.
  const Comparisons by_hand{
      t.triplets.first.clone(), t.triplets.second.clone(), t.triplets.third.clone(), {}, {}, {}};
  const ComparedItems same_values = gather(t.items, by_hand);
  EXPECT_FALSE(same_values.third.phi.is_same(t.roles[2].phi));
  EXPECT_TRUE(same_values.third.phi.equal(t.roles[2].phi));
}

TEST(Items, ScoreRefusesRowsReplacedUnderTheRoleLayout) {
  // The layout is trusted without reading a row; rows set by hand on laid-out comparisons are
  // refused even when their values are the ones it names.
  const ByRole t = by_role();
  testing::TableModule module(1, 3, {1.0});
  Comparisons swapped = t.triplets;
  swapped.first = torch::tensor({1, 0}, torch::kLong);
  Comparisons same_values = t.triplets;
  same_values.third = t.triplets.third.clone();
  for (const Comparisons& replaced : {swapped, same_values}) {
    try {
      module.score(t.items, replaced);
      FAIL() << "rows replaced under the role layout were accepted";
    } catch (const ComponentError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "rows are not the ones their role layout was declared with (blocks 0, 1, 2 "
                    "from row 0)"),
                std::string::npos)
          << e.what();
    }
  }
  const ItemBlocks two_blocks({t.roles[0], t.roles[1]});
  EXPECT_THROW(module.score(two_blocks, t.triplets), ComponentError);
}

TEST(Items, TheBlocksByRowAreTheirConcatenationMadeOnceWithGradient) {
  ByRole t = by_role();
  for (ItemFeatures& role : t.roles)
    role.phi.requires_grad_(true);
  const ItemBlocks items(t.roles);
  EXPECT_EQ(items.size(), 6);
  EXPECT_TRUE(items.has_texts("title"));
  EXPECT_FALSE(items.has_texts("caption"));
  const ItemBlocks copy = items;
  {
    torch::NoGradGuard no_grad;  // a reader without gradient first
    EXPECT_TRUE(
        items.by_row().phi.equal(torch::cat({t.roles[0].phi, t.roles[1].phi, t.roles[2].phi})));
  }
  EXPECT_TRUE(copy.by_row().phi.is_same(items.by_row().phi));
  EXPECT_TRUE(items.by_row().texts.at("title").present.equal(
      torch::tensor({true, true, true, false, true, true})));
  copy.by_row().phi.sum().backward();
  EXPECT_TRUE(t.roles[1].phi.grad().equal(torch::ones({2, 3})));
  // One block is its own rows, without a copy.
  EXPECT_TRUE(ItemBlocks(t.roles[0]).by_row().phi.is_same(t.roles[0].phi));
  EXPECT_EQ(ItemBlocks().size(), 0);
}

TEST(Items, BlocksMustHoldTheSameFeatures) {
  const ByRole t = by_role();
  ItemFeatures without_texts = t.roles[1];
  without_texts.texts.clear();
  try {
    ItemBlocks({t.roles[0], without_texts});
    FAIL() << "blocks of other features were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "item block 1 holds other features than block 0 (φ set against set, ψ set against "
              "set, text encoders [] against [title]): every block holds the same");
  }
}

TEST(Comparisons, ReversedSlicedAndMovedKeepTheirLayoutWithTheirRows) {
  const Comparisons c = Comparisons::triplets_by_role(4, torch::kCPU);
  ASSERT_TRUE(c.roles.declared());
  for (const Comparisons& kept : {c, c.reversed(), c.slice(1, 3), c.reversed().slice(2, 9),
                                  c.without_conditions(), c.to(torch::kCPU)})
    EXPECT_TRUE(kept.roles.holds_rows_of(kept));
  const Comparisons r = c.reversed().slice(1, 3);
  EXPECT_EQ(r.roles.second(), 2);
  EXPECT_EQ(r.roles.third(), 1);
  EXPECT_EQ(r.roles.begin(), 1);
  EXPECT_FALSE(c.roles.holds_rows_of(c.reversed()));
  EXPECT_FALSE(Comparisons::triplets(torch::zeros({2, 3}, torch::kLong)).roles.declared());
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
  torch::Tensor embed_impl(const EmbedInput& input) override { return input.phi.unsqueeze(1); }
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& c) override {
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
                      {},
                      {},
                      {}};
  try {
    module.score(three_items(), c);
    FAIL() << "row 3 of 3 items was accepted";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("second rows must lie in [0, 3), the items, and "
                                         "comparison 0 names row 3"),
              std::string::npos)
        << e.what();
  }
}

// Rows moved off the CPU are checked on the host copy Comparisons::to kept, without reading the
// device: here the meta device, which holds no values at all, stands for an accelerator.
TEST(Comparisons, ScoreChecksRowsMovedToADeviceOnTheirHostCopy) {
  testing::TableModule module(1, 2, {1.0});
  const Comparisons on_host = Comparisons::triplets(torch::tensor({{0, 1, 2}, {2, 0, 5}}));
  for (const Comparisons& moved :
       {on_host.to(torch::kMeta), on_host.slice(1, 2).to(torch::kMeta),
        on_host.to(torch::kMeta).slice(1, 2), on_host.to(torch::kMeta).reversed().reversed()}) {
    ASSERT_TRUE(moved.third.is_meta());
    EXPECT_TRUE(moved.host.of(moved.third).defined());
    EXPECT_NE(error_of([&] { module.score(three_items(), moved); })
                  .find("the comparisons' third rows must lie in [0, 3), the items, and "
                        "comparison"),
              std::string::npos);
  }
  // Rows made on the device, or replaced since, have no host copy: they are not read.
  Comparisons replaced = on_host.to(torch::kMeta);
  replaced.third = torch::zeros({2}, torch::TensorOptions(torch::kMeta).dtype(torch::kLong));
  EXPECT_FALSE(replaced.host.of(replaced.third).defined());
  EXPECT_TRUE(replaced.host.of(replaced.first).defined());
}

// Weighs a pair's two embeddings otherwise than a triplet's: what pair_scores_contract must catch.
class PairsWeighedApart final : public ConditionModule {
 public:
  PairsWeighedApart() { set_contract(testing::pair_scoring()); }
  std::int64_t num_embeddings() const override { return 2; }
  std::int64_t output_dim() const override { return 1; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override {
    return input.phi.reshape({input.phi.size(0), 2, 1});
  }
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& c) override {
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

// Mean-pools a [B, 2, 2, 2] map into φ [B, 2]; `map_shape` is what it returns as its map.
class MapBackbone final : public Backbone {
 public:
  explicit MapBackbone(bool provides, std::vector<std::int64_t> map_shape = {})
      : map_shape_(std::move(map_shape)) {
    Contract c;
    if (provides) c.provides = {{Resource::FeatureMap}};
    set_contract(c);
    set_label("backbone 'pooled'");
  }
  std::int64_t embedding_dim() const override { return 2; }
  std::int64_t feature_map_channels() const override { return 2; }

 protected:
  torch::Tensor forward_images(const torch::Tensor& images) override {
    return forward_with_map(images).phi;
  }
  BackboneOutput forward_with_map(const torch::Tensor& images) override {
    const torch::Tensor map = images.narrow(1, 0, 2);
    return {map.mean({2, 3}), map_shape_.empty() ? map : torch::zeros(map_shape_)};
  }

 private:
  std::vector<std::int64_t> map_shape_;
};

TEST(FeatureMap, OnlyABackboneThatProvidesItIsAskedAndItsShapeIsChecked) {
  const torch::Tensor images = torch::rand({3, 3, 2, 2});
  MapBackbone provides(true);
  const BackboneOutput out = provides.embed_with_map(images);
  EXPECT_TRUE(out.phi.equal(provides.embed(images)));
  EXPECT_EQ(out.feature_map.sizes(), (std::vector<std::int64_t>{3, 2, 2, 2}));
  EXPECT_EQ(error_of([] {
              MapBackbone(false).embed_with_map(torch::rand({1, 3, 2, 2}));
            }),
            "backbone 'pooled' was asked for the backbone's feature map, which its contract "
            "does not provide");
  EXPECT_NE(error_of([] {
              MapBackbone(true, {1, 3, 2, 2}).embed_with_map(torch::rand({1, 3, 2, 2}));
            }).find("its feature map is Float [1, 3, 2, 2], expected [1, 2, h, w]"),
            std::string::npos);
}

// ψ_k = the map's channel k at position (0, 0); attention all on that position.
class MapReader final : public ConditionModule {
 public:
  explicit MapReader(bool attention_shaped = true) : attention_shaped_(attention_shaped) {
    Contract c;
    c.needs = {{Resource::FeatureMap}};
    c.provides = {{Resource::AttentionMaps}};
    set_contract(c);
    set_label("condition_module 'reader'");
  }
  std::int64_t num_embeddings() const override { return 2; }
  std::int64_t output_dim() const override { return 1; }

 protected:
  torch::Tensor embed_impl(const EmbedInput& input) override {
    return input.feature_map.select(3, 0).select(2, 0).unsqueeze(2);
  }
  torch::Tensor attention_maps_impl(const EmbedInput& input) override {
    const torch::Tensor& map = input.feature_map;
    torch::Tensor a = torch::zeros({map.size(0), 2, map.size(2), map.size(3)});
    a.select(3, 0).select(2, 0).fill_(1);
    return attention_shaped_ ? a : a.sum(1);
  }
  ComparisonScores score_impl(const ItemBlocks& items, const Comparisons& c) override {
    return nn::expected_distances(*this, gather(items, c), torch::full({c.size(), 2}, 0.5f));
  }

 private:
  bool attention_shaped_;
};

TEST(FeatureMap, AModuleIsGivenExactlyWhatItsContractNeeds) {
  const torch::Tensor map = torch::rand({3, 2, 4, 5});
  const torch::Tensor phi = torch::rand({3, 2});
  MapReader reader;
  EXPECT_TRUE(reader.embed(EmbedInput{phi, map}).equal(map.select(3, 0).select(2, 0).unsqueeze(2)));
  EXPECT_EQ(reader.attention_maps(EmbedInput{phi, map}).sizes(),
            (std::vector<std::int64_t>{3, 2, 4, 5}));
  EXPECT_EQ(error_of([&] { reader.embed(phi); }),
            "condition_module 'reader' needs the backbone's feature map [B, C, h, w] of the 3 "
            "images, and was given an undefined tensor");
  EXPECT_EQ(error_of([&] {
              reader.embed(EmbedInput{phi, map, torch::rand({3, 3, 8, 8})});
            }),
            "condition_module 'reader' was given the images of the items it embeds, which its "
            "contract does not need");
  EXPECT_NE(error_of([&] {
              MapReader(false).attention_maps(EmbedInput{phi, map});
            }).find("the attention maps has shape [3, 4, 5], expected [3, 2, 4, 5]"),
            std::string::npos);
  testing::TableModule no_maps(1, 2, {1.0});
  EXPECT_EQ(error_of([&] { no_maps.attention_maps(EmbedInput{phi}); }),
            "condition_module was asked for per-condition attention maps over the feature map, "
            "which its contract does not provide");
}

}  // namespace
}  // namespace wscsl
