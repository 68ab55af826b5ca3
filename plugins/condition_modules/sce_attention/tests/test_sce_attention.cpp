#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "../src/sce_attention.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/pair_scores_contract.hpp"

using namespace wscsl;
using wscsl::testing::parameter;

namespace {

// K = 3 masks over D = 5.
constexpr std::int64_t kK = 3, kD = 5;
// float32 rounding of O(1) values (relative 6e-8) through two small layers, a softmax and a norm
// stays far below this; a wrong input order, member or weight changes the values by O(0.01) or
// more.
constexpr double kTolerance = 1e-5;

using Row = std::vector<double>;

std::shared_ptr<ConditionModule> make(const std::string& options) {
  return wscsl::testing::build<ConditionModule>("sce_attention", options,
                                                wscsl::testing::facts(kK, kD));
}

Row row(const torch::Tensor& x, std::int64_t i) {
  Row v(static_cast<std::size_t>(x.size(1)));
  for (std::size_t j = 0; j < v.size(); ++j)
    v[j] = x[i][static_cast<std::int64_t>(j)].item<double>();
  return v;
}

// x / (‖x‖ + 1e-10), or x itself.
Row normalised(Row v, bool normalize) {
  double norm = 0;
  for (double e : v)
    norm += e * e;
  if (normalize)
    for (double& e : v)
      e /= std::sqrt(norm) + 1e-10;
  return v;
}

Row product(const Row& a, const Row& b) {
  Row v(a.size());
  for (std::size_t j = 0; j < a.size(); ++j)
    v[j] = a[j] * b[j];
  return v;
}

// softmax(W2 relu(W1 y + b1) + b2), with the module's branch layers.
Row branch(const ConditionModule& m, const Row& y) {
  const torch::Tensor w1 = parameter(m, "branch_hidden.weight"),
                      b1 = parameter(m, "branch_hidden.bias"),
                      w2 = parameter(m, "branch_out.weight"), b2 = parameter(m, "branch_out.bias");
  EXPECT_EQ(w1.size(1), static_cast<std::int64_t>(y.size()));
  Row hidden(static_cast<std::size_t>(w1.size(0)));
  for (std::size_t h = 0; h < hidden.size(); ++h) {
    double v = b1[static_cast<std::int64_t>(h)].item<double>();
    for (std::size_t j = 0; j < y.size(); ++j)
      v += w1[static_cast<std::int64_t>(h)][static_cast<std::int64_t>(j)].item<double>() * y[j];
    hidden[h] = std::max(0.0, v);
  }
  Row w(kK);
  double total = 0;
  for (std::int64_t k = 0; k < kK; ++k) {
    double v = b2[k].item<double>();
    for (std::size_t h = 0; h < hidden.size(); ++h)
      v += w2[k][static_cast<std::int64_t>(h)].item<double>() * hidden[h];
    w[static_cast<std::size_t>(k)] = std::exp(v);
    total += std::exp(v);
  }
  for (double& e : w)
    e /= total;
  return w;
}

// E = Σ_k w_k ψ_k, ψ_k = (φ ⊙ relu(m_k)) normalised.
Row fused(const ConditionModule& m, const Row& phi, const Row& w, bool normalize) {
  const torch::Tensor masks = torch::relu(parameter(m, "masks.weight"));
  Row e(phi.size(), 0.0);
  for (std::int64_t k = 0; k < kK; ++k) {
    Row psi(phi.size());
    for (std::size_t j = 0; j < phi.size(); ++j)
      psi[j] = phi[j] * masks[k][static_cast<std::int64_t>(j)].item<double>();
    psi = normalised(psi, normalize);
    for (std::size_t j = 0; j < e.size(); ++j)
      e[j] += w[static_cast<std::size_t>(k)] * psi[j];
  }
  return e;
}

// F.pairwise_distance: ‖a − b + 1e-6‖.
double distance(const Row& a, const Row& b) {
  double s = 0;
  for (std::size_t j = 0; j < a.size(); ++j)
    s += std::pow(a[j] - b[j] + 1e-6, 2);
  return std::sqrt(s);
}

Row concat(std::initializer_list<Row> parts) {
  Row y;
  for (const Row& p : parts)
    y.insert(y.end(), p.begin(), p.end());
  return y;
}

// The text features of the items of a batch of 6 triplets laid out by role: those of the anchors,
// then those of the close and of the far items.
TextFeatures by_role(const TextFeatures& anchors, const TextFeatures& close,
                     const TextFeatures& far) {
  return {torch::cat({anchors.features, close.features, far.features}),
          torch::cat({anchors.present, close.present, far.present})};
}

// Texts for a batch of 6 where some items of each member have none.
wscsl::testing::RandomTriplets with_texts(wscsl::testing::RandomTriplets t) {
  t.items.texts["titles"] =
      by_role(wscsl::testing::unit_text_features({true, false, true, true, true, false}, kD),
              wscsl::testing::unit_text_features({true, true, false, true, false, true}, kD),
              wscsl::testing::unit_text_features({false, true, true, true, true, true}, kD));
  return t;
}

void expect_rows_sum_to_one(const ComparisonScores& s) {
  EXPECT_TRUE(torch::allclose(s.weights.sum(1), torch::ones({s.weights.size(0)}), 0, kTolerance));
}

}  // namespace

TEST(SceAttention, FusedDistancesFollowANaiveLoopOverTheBranchAndTheMasks) {
  torch::manual_seed(0);
  for (const bool normalize : {true, false}) {
    auto m = make(std::string("hidden = 4\nnormalize = ") + (normalize ? "true" : "false"));
    const auto t = wscsl::testing::random_triplets(*m, 6, kD);
    const ComparisonScores s = m->score(t.items, t.comparisons);
    const ComparedItems in = gather(t.items, t.comparisons);
    for (std::int64_t i = 0; i < 6; ++i) {
      const Row a = row(in.first.phi, i), c = row(in.second.phi, i), f = row(in.third.phi, i);
      // The branch reads [φa; φf; φc], the reference's (anchor, far, close) order.
      const Row w = branch(*m, concat({normalised(a, normalize), normalised(f, normalize),
                                       normalised(c, normalize)}));
      for (std::int64_t k = 0; k < kK; ++k)
        EXPECT_NEAR(s.weights[i][k].item<double>(), w[static_cast<std::size_t>(k)], kTolerance);
      const Row ea = fused(*m, a, w, normalize);
      EXPECT_NEAR(s.fused_second[i].item<double>(), distance(ea, fused(*m, c, w, normalize)),
                  kTolerance)
          << normalize;
      EXPECT_NEAR(s.fused_third[i].item<double>(), distance(ea, fused(*m, f, w, normalize)),
                  kTolerance)
          << normalize;
    }
    // Mask L1 as the reference accumulates it: the mean over masks of ‖relu(m_k)‖₁.
    EXPECT_NEAR(s.aux.at("mask_l1")[0].item<double>(),
                torch::relu(parameter(*m, "masks.weight")).sum(1).mean().item<double>(), 1e-5);
  }
}

// Eq. 3: each distance is weighted by the branch on the two items it compares, w([a; c]) for
// d(a, c) and w([a; f]) for d(a, f), both images of a distance fused with its own weights.
TEST(SceAttention, ThePairBranchWeightsEachDistanceFromItsOwnPair) {
  torch::manual_seed(2);
  auto m = make("branch = \"pair\"\nhidden = 4");
  EXPECT_EQ(parameter(*m, "branch_hidden.weight").sizes(), (std::vector<std::int64_t>{4, 2 * kD}));
  const auto t = wscsl::testing::random_triplets(*m, 6, kD);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  const ComparedItems in = gather(t.items, t.comparisons);
  for (std::int64_t i = 0; i < 6; ++i) {
    const Row a = row(in.first.phi, i), c = row(in.second.phi, i), f = row(in.third.phi, i);
    const Row w_close = branch(*m, concat({normalised(a, true), normalised(c, true)}));
    const Row w_far = branch(*m, concat({normalised(a, true), normalised(f, true)}));
    for (std::int64_t k = 0; k < kK; ++k)
      EXPECT_NEAR(s.weights[i][k].item<double>(), w_close[static_cast<std::size_t>(k)], kTolerance);
    EXPECT_NEAR(s.fused_second[i].item<double>(),
                distance(fused(*m, a, w_close, true), fused(*m, c, w_close, true)), kTolerance);
    EXPECT_NEAR(s.fused_third[i].item<double>(),
                distance(fused(*m, a, w_far, true), fused(*m, f, w_far, true)), kTolerance);
  }
  expect_rows_sum_to_one(s);
  // d(a, c) is the same whatever the third item is.
  ItemFeatures others;
  others.phi = torch::randn({6, kD});
  others.psi = m->embed(others.phi);
  const Comparisons& c = t.comparisons;
  const Comparisons other_far{c.first, c.second, torch::arange(18, 24, torch::kLong), {}, {}, {}};
  EXPECT_TRUE(
      torch::equal(m->score(ItemFeatures::concatenated({t.items, others}), other_far).fused_second,
                   s.fused_second));
}

// Eq. 6 and 7: the branch reads the text features T, or φ̂ ⊙ T; items without text read zeros.
TEST(SceAttention, TextAndVisualTextInputsFollowANaiveLoop) {
  torch::manual_seed(3);
  for (const char* input : {"text", "visual_text"})
    for (const char* form : {"triplet", "pair"}) {
      auto m =
          make(fmt::format("branch = \"{}\"\nbranch_input = \"{}\"\ntext = \"titles\"\n"
                           "hidden = 4",
                           form, input));
      const auto t = with_texts(wscsl::testing::random_triplets(*m, 6, kD));
      const ComparisonScores s = m->score(t.items, t.comparisons);
      const ComparedItems in = gather(t.items, t.comparisons);
      const bool visual = std::string(input) == "visual_text";
      for (std::int64_t i = 0; i < 6; ++i) {
        const auto features = [&](const ItemFeatures& item) {
          const TextFeatures& text = item.texts.at("titles");
          return visual ? product(normalised(row(item.phi, i), true), row(text.features, i))
                        : row(text.features, i);
        };
        const Row ya = features(in.first), yc = features(in.second), yf = features(in.third);
        const bool pair = std::string(form) == "pair";
        const Row w_close = branch(*m, pair ? concat({ya, yc}) : concat({ya, yf, yc}));
        const Row w_far = pair ? branch(*m, concat({ya, yf})) : w_close;
        for (std::int64_t k = 0; k < kK; ++k)
          EXPECT_NEAR(s.weights[i][k].item<double>(), w_close[static_cast<std::size_t>(k)],
                      kTolerance)
              << input << " " << form;
        const Row a = row(in.first.phi, i);
        EXPECT_NEAR(
            s.fused_second[i].item<double>(),
            distance(fused(*m, a, w_close, true), fused(*m, row(in.second.phi, i), w_close, true)),
            kTolerance)
            << input << " " << form;
        EXPECT_NEAR(
            s.fused_third[i].item<double>(),
            distance(fused(*m, a, w_far, true), fused(*m, row(in.third.phi, i), w_far, true)),
            kTolerance)
            << input << " " << form;
      }
      expect_rows_sum_to_one(s);
      // The text is read: other features give other weights.
      const TextFeatures& titles = t.items.texts.at("titles");
      ItemFeatures other = t.items;
      other.texts["titles"] = by_role(
          wscsl::testing::unit_text_features(std::vector<bool>(6, true), kD),
          titles.index_select(t.comparisons.second), titles.index_select(t.comparisons.third));
      EXPECT_GT((m->score(other, t.comparisons).weights - s.weights).abs().max().item<double>(),
                1e-4);
      // Without the text encoder's features the module refuses the input.
      const auto untitled = wscsl::testing::random_triplets(*m, 6, kD);
      EXPECT_THROW(m->score(untitled.items, untitled.comparisons), ComponentError);
    }
}

// Figure 3's "average embeddings": E = (1/K) Σ_k ψ_k, no branch layers.
TEST(SceAttention, AverageIsTheMeanOfTheMaskedEmbeddings) {
  torch::manual_seed(4);
  auto m = make("assignment = \"average\"");
  EXPECT_EQ(m->parameters().size(), 1u);  // the masks only
  const auto t = wscsl::testing::random_triplets(*m, 6, kD);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  const ComparedItems in = gather(t.items, t.comparisons);
  EXPECT_TRUE(torch::allclose(s.weights, torch::full({6, kK}, 1.0 / kK)));
  const torch::Tensor mean_a = in.first.psi.mean(1), mean_c = in.second.psi.mean(1),
                      mean_f = in.third.psi.mean(1);
  for (std::int64_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(s.fused_second[i].item<double>(), distance(row(mean_a, i), row(mean_c, i)),
                kTolerance);
    EXPECT_NEAR(s.fused_third[i].item<double>(), distance(row(mean_a, i), row(mean_f, i)),
                kTolerance);
  }
}

// Our per-call reading of Figure 3's "random assignments": each weight vector is one-hot on a
// uniformly drawn embedding, drawn again at every call from LibTorch's generator; no branch layers.
TEST(SceAttention, RandomPerCallAssignsEachPairOneUniformlyDrawnEmbedding) {
  for (const char* form : {"triplet", "pair"}) {
    auto m = make(fmt::format("assignment = \"random_per_call\"\nbranch = \"{}\"", form));
    EXPECT_EQ(m->parameters().size(), 1u) << form;
    torch::manual_seed(5);
    const std::int64_t n = 3000;
    const auto t = wscsl::testing::random_triplets(*m, n, kD);
    torch::manual_seed(6);
    const ComparisonScores s = m->score(t.items, t.comparisons);
    // One-hot rows: every weight 0 or 1, one 1 per row.
    EXPECT_TRUE(torch::equal(s.weights * (1 - s.weights), torch::zeros_like(s.weights))) << form;
    expect_rows_sum_to_one(s);
    // The fused distances are the per-embedding distances of the drawn embedding.
    const torch::Tensor drawn = s.weights.argmax(1);
    EXPECT_TRUE(torch::allclose(
        s.fused_second, s.second_distances.gather(1, drawn.unsqueeze(1)).squeeze(1), 0, kTolerance))
        << form;
    const torch::Tensor far_hits =
        (s.third_distances - s.fused_third.unsqueeze(1)).abs() < kTolerance;
    EXPECT_TRUE(far_hits.any(1).all().item<bool>()) << form;
    // Uniform: each embedding is drawn n/K times, within 5 binomial standard deviations.
    const double expected = static_cast<double>(n) / kK,
                 sd = std::sqrt(n * (1.0 / kK) * (1.0 - 1.0 / kK));
    for (std::int64_t k = 0; k < kK; ++k)
      EXPECT_NEAR(s.weights.select(1, k).sum().item<double>(), expected, 5 * sd) << form;
    // With the pair branch the two distances of a triplet draw independently: d(a, f) uses the
    // embedding of d(a, c) in about 1/K of the triplets, not in all.
    if (std::string(form) == "pair") {
      const double same = far_hits.gather(1, drawn.unsqueeze(1)).sum().item<double>();
      EXPECT_NEAR(same, expected, 5 * sd);
    } else {
      EXPECT_TRUE(torch::allclose(s.fused_third,
                                  s.third_distances.gather(1, drawn.unsqueeze(1)).squeeze(1), 0,
                                  kTolerance));
    }
    // A new draw at every call; the same draw from the same generator state.
    EXPECT_FALSE(torch::equal(m->score(t.items, t.comparisons).weights, s.weights)) << form;
    torch::manual_seed(6);
    EXPECT_TRUE(torch::equal(m->score(t.items, t.comparisons).weights, s.weights)) << form;
  }
}

// The released random baseline (--rand_typespaces): the conditions in a seeded permutation, in
// blocks of ⌈C/M⌉, block j embedding j — 66 pairs among M = 4 in blocks of 17, 17, 17, 15; among
// M = 20 in blocks of 4, which fill 17 of the 20.
TEST(SceAttention, TheReleasedPartitionIsBlocksOfASeededPermutation) {
  const auto counts = [](const torch::Tensor& p) {
    const torch::Tensor c = torch::bincount(p);
    return std::vector<std::int64_t>(c.data_ptr<std::int64_t>(),
                                     c.data_ptr<std::int64_t>() + c.numel());
  };
  torch::manual_seed(3);
  const torch::Tensor four = sce_attention::released_partition(66, 4);
  EXPECT_EQ(counts(four), (std::vector<std::int64_t>{17, 17, 17, 15}));
  std::vector<std::int64_t> twenty(16, 4);
  twenty.push_back(2);
  EXPECT_EQ(counts(sce_attention::released_partition(66, 20)), twenty);
  torch::manual_seed(3);
  EXPECT_TRUE(torch::equal(sce_attention::released_partition(66, 4), four));
  torch::manual_seed(4);
  EXPECT_FALSE(torch::equal(sce_attention::released_partition(66, 4), four));
}

// With assignment = "random" each triplet's type pair has the embedding the partition gives it,
// for both distances and at every call; the partition is a buffer, kept by checkpoints.
TEST(SceAttention, RandomGivesEachTypePairTheEmbeddingOfItsPartition) {
  torch::manual_seed(2);
  auto m = make("assignment = \"random\"\nnum_embeddings = 2");
  EXPECT_EQ(m->supervision(), Supervision::Conditioned);
  EXPECT_TRUE(m->contract().needs_resource(Resource::TripletConditions));
  EXPECT_EQ(m->parameters().size(), 1u);
  torch::Tensor partition;
  for (const auto& b : m->named_buffers())
    if (b.key() == "partition") partition = b.value();
  ASSERT_TRUE(partition.defined());
  // 3 conditions among 2 embeddings: blocks of 2 and 1.
  EXPECT_EQ(torch::bincount(partition, {}, 2).min().item<std::int64_t>(), 1);
  auto t = wscsl::testing::random_triplets(*m, 12, kD);
  t.comparisons.conditions = torch::arange(12, torch::kLong).remainder(kK);
  const ComparisonScores s = m->score(t.items, t.comparisons);
  const torch::Tensor chosen = partition.index_select(0, t.comparisons.conditions);
  EXPECT_TRUE(torch::equal(s.weights, torch::one_hot(chosen, 2).to(s.weights.scalar_type())));
  EXPECT_TRUE(torch::allclose(
      s.fused_second, s.second_distances.gather(1, chosen.unsqueeze(1)).squeeze(1), 0, kTolerance));
  EXPECT_TRUE(torch::allclose(
      s.fused_third, s.third_distances.gather(1, chosen.unsqueeze(1)).squeeze(1), 0, kTolerance));
  EXPECT_TRUE(torch::equal(m->score(t.items, t.comparisons).weights, s.weights));
  EXPECT_THROW(m->score(t.items, t.comparisons.without_conditions()), Error);
}

// The outfit evaluators score a pair (u, v) exactly as they scored the triplet (u, v, v) before
// modules scored pairs, wherever the weights of d(u, v) read no third item.
TEST(SceAttention, APairScoresAsTheTripletWhoseThirdItemIsTheSecond) {
  for (const char* options :
       {"branch = \"pair\"", "branch = \"pair\"\nbranch_input = \"visual_text\"\ntext = \"titles\"",
        "assignment = \"average\"", "assignment = \"random\"", "assignment = \"random_per_call\"",
        "assignment = \"random_per_call\"\nbranch = \"pair\""}) {
    torch::manual_seed(7);
    auto m = make(options);
    const auto t = with_texts(wscsl::testing::random_triplets(*m, 6, kD, true));
    EXPECT_EQ(wscsl::testing::pair_scores_contract(*m, t, /*seed=*/8), "") << options;
  }
}

// The learned triplet branch weights d(a, c) by [a; f; c]: a pair alone has no weights.
TEST(SceAttention, TheLearnedTripletBranchScoresTripletsOnly) {
  for (const char* options : {"", "branch_input = \"text\"\ntext = \"titles\""}) {
    auto m = make(options);
    EXPECT_FALSE(m->contract().provides_resource(Resource::PairScores, "")) << options;
    const auto t = with_texts(wscsl::testing::random_triplets(*m, 6, kD));
    const Comparisons& c = t.comparisons;
    EXPECT_THROW(m->score(t.items, Comparisons::pairs(c.first, c.second)), ComponentError)
        << options;
  }
}

TEST(SceAttention, TheWeightsDependOnTheOrderOfTheTriplet) {
  torch::manual_seed(1);
  auto m = make("");
  const auto t = wscsl::testing::random_triplets(*m, 8, kD);
  const ComparisonScores s = m->score(t.items, t.comparisons),
                         r = m->score(t.items, t.comparisons.reversed());
  EXPECT_GT((s.weights - r.weights).abs().max().item<double>(), 1e-5);
  expect_rows_sum_to_one(s);
  EXPECT_EQ(m->supervision(), Supervision::Weak);
}

TEST(SceAttention, EachEmbeddingIsAMaskedUnitVector) {
  auto m = make("masks = \"prein\"");
  const torch::Tensor psi = m->embed(torch::randn({4, kD}));
  EXPECT_TRUE(torch::allclose(psi.norm(2, {2}), torch::ones({4, kK}), 1e-5, 1e-6));
}

TEST(SceAttention, TheContractNeedsTextFeaturesOnlyWhenTheBranchReadsText) {
  for (const char* options : {"", "branch = \"pair\"", "assignment = \"average\"",
                              "assignment = \"random\"", "assignment = \"random_per_call\""})
    EXPECT_FALSE(make(options)->contract().needs_resource(Resource::TextFeatures)) << options;
  for (const char* input : {"text", "visual_text"}) {
    const auto m = make(fmt::format("branch_input = \"{}\"\ntext = \"titles\"", input));
    EXPECT_EQ(m->contract().needed_names(Resource::TextFeatures),
              (std::vector<std::string>{"titles"}));
    EXPECT_TRUE(m->contract().provides_resource(Resource::AuxTerm, "mask_l1"));
  }
}

TEST(SceAttention, RejectsInconsistentOptions) {
  const auto errors = [](const std::string& options) {
    const Diagnostics d = wscsl::testing::bind_diagnostics(Kind::ConditionModule, "sce_attention",
                                                           options, wscsl::testing::facts(kK, kD));
    return d.error_count();
  };
  EXPECT_EQ(errors("branch_input = \"text\""), 1u);         // text missing
  EXPECT_EQ(errors("branch_input = \"visual_text\""), 1u);  // text missing
  EXPECT_EQ(errors("text = \"titles\""), 1u);               // inert with visual input
  EXPECT_EQ(errors("assignment = \"average\"\nhidden = 8"), 1u);
  EXPECT_EQ(errors("assignment = \"random\"\nbranch_input = \"text\"\ntext = \"titles\""), 2u);
  EXPECT_EQ(errors("assignment = \"average\"\nbranch = \"pair\""), 1u);
  EXPECT_EQ(errors("branch = \"quadruplet\"\nassignment = \"mean\"\nbranch_input = \"audio\""), 3u);
  EXPECT_EQ(errors("assignment = \"random_per_call\"\nbranch = \"pair\""), 0u);
  EXPECT_EQ(errors("assignment = \"random\"\nbranch = \"pair\""), 0u);
  EXPECT_EQ(errors("branch_input = \"text\"\ntext = \"titles\"\nbranch = \"pair\""), 0u);
}
