#include <gtest/gtest.h>
#include <algorithm>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "wscsl/plot/canvas.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/outfit_eval_fixtures.hpp"

using namespace wscsl;
using wscsl::testing::ConditionPicker;
using wscsl::testing::id_lists;
using wscsl::testing::metric;
using wscsl::testing::outfit_table;
using wscsl::testing::three_type_pair_conditions;

namespace {

struct Question {
  std::vector<std::int64_t> items;
  std::vector<std::int64_t> candidates;
  std::int64_t answer;
  std::int64_t blank_position;
};

OutfitData outfits(const torch::Tensor& types, const std::vector<Question>& questions) {
  OutfitData o;
  o.item_types = types;
  o.type_pair_conditions = three_type_pair_conditions();
  o.compatibility = {id_lists({}), torch::zeros({0}, torch::kLong)};
  std::vector<std::vector<std::int64_t>> items;
  std::vector<std::int64_t> candidates, answers, positions;
  for (const Question& q : questions) {
    items.push_back(q.items);
    candidates.insert(candidates.end(), q.candidates.begin(), q.candidates.end());
    answers.push_back(q.answer);
    positions.push_back(q.blank_position);
  }
  o.blanks = {id_lists(items), torch::tensor(candidates, torch::kLong).reshape({-1, 4}),
              torch::tensor(answers, torch::kLong), torch::tensor(positions, torch::kLong)};
  return o;
}

std::vector<std::vector<std::string>> read_tsv(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, '\t');)
      fields.push_back(f);
    rows.push_back(fields);
  }
  return rows;
}

// Items on a line: positions 0, 1, 2, 10, 1.5, −1, 4, 2; items 4 and 7 are of type b, item 6 of
// type c, the others of type a.
struct LineCase {
  torch::Tensor psi = torch::tensor({0.0, 1.0, 2.0, 10.0, 1.5, -1.0, 4.0, 2.0}).reshape({8, 1, 1});
  torch::Tensor types = torch::tensor({0, 0, 0, 0, 1, 0, 2, 1}, torch::kLong);
  std::vector<Question> questions = {
      // 19, 2, 3, 7: the right answer (item 4) is chosen.
      {{0, 1}, {3, 4, 5, 6}, 1, 3},
      // 2, 3, 8, 1: item 1 is chosen instead of the right item 6.
      {{2}, {6, 5, 3, 1}, 0, 1},
      // 2, 2, 10, 4: a tie between columns 1 and 2 goes to the first, not the right second.
      {{0}, {2, 7, 3, 6}, 1, 2}};
};

}  // namespace

TEST(FillInTheBlank, HandComputedChoicesPerTypeAndResults) {
  const LineCase c;
  auto data = wscsl::testing::three_type_outfit_dataset(8, outfits(c.types, c.questions));
  auto e = wscsl::testing::build<Evaluator>("fill_in_the_blank",
                                            "types = [\"b\", \"c\", \"a\"]\nshown = 0");
  wscsl::testing::TableModule weak(1, 1, {1.0});
  const EmbeddingTable t = outfit_table(c.psi);
  wscsl::testing::ScratchDir dir("fitb");
  const EvalReport r = wscsl::testing::run_evaluator(*e, weak, data, t, t, true, dir.path());
  EXPECT_DOUBLE_EQ(metric(r, "accuracy"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(metric(r, "accuracy/b"), 0.5);  // questions 1 (right) and 3 (wrong)
  EXPECT_DOUBLE_EQ(metric(r, "accuracy/c"), 0.0);  // question 2
  EXPECT_THROW(metric(r, "accuracy/a"), Error);    // no question's answer is of type a
  ASSERT_EQ(r.artifacts.size(), 1u);
  const auto rows = read_tsv(dir.path() / "fill_in_the_blank.tsv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"question", "blank_position", "chosen", "right",
                                               "correct", "chosen_item", "right_item", "right_type",
                                               "score_1", "score_2", "score_3", "score_4"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "3", "2", "2", "1", "4", "4", "b", "19", "2",
                                               "3", "7"}));
  EXPECT_EQ(rows[2],
            (std::vector<std::string>{"2", "1", "4", "1", "0", "1", "6", "c", "2", "3", "8", "1"}));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"3", "2", "1", "2", "0", "2", "7", "b", "2", "2",
                                               "10", "4"}));
  // Validation: the same metrics, nothing written.
  std::filesystem::remove(dir.path() / "fill_in_the_blank.tsv");
  const EvalReport v = wscsl::testing::run_evaluator(*e, weak, data, t, t, false, dir.path());
  EXPECT_DOUBLE_EQ(metric(v, "accuracy"), 1.0 / 3);
  EXPECT_TRUE(v.artifacts.empty());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  EXPECT_TRUE(e->runs_during_validation());
}

// Random embeddings, types and questions against a loop that scores one pair at a time from ψ in
// double precision, for a weak and a conditioned module.
TEST(FillInTheBlank, MatchesANaiveLoop) {
  torch::manual_seed(5);
  const std::int64_t images = 20, k = 6, dim = 3;
  const torch::Tensor psi = torch::randn({images, k, dim});
  const torch::Tensor types = torch::randint(0, 3, {images}, torch::kLong);
  std::vector<Question> questions;
  for (int q = 0; q < 30; ++q) {
    const std::int64_t n = 1 + torch::randint(0, 5, {1}).item<std::int64_t>();
    const torch::Tensor drawn = torch::randperm(images).slice(0, 0, n + 4);
    const auto* d = drawn.data_ptr<std::int64_t>();
    questions.push_back({{d, d + n}, {d + n, d + n + 4}, q % 4, 1 + q % (n + 1)});
  }
  auto data = wscsl::testing::three_type_outfit_dataset(images, outfits(types, questions));
  const EmbeddingTable t = outfit_table(psi);
  const torch::Tensor pair_condition = three_type_pair_conditions();
  auto e = wscsl::testing::build<Evaluator>("fill_in_the_blank", "shown = 0");
  for (const bool conditioned : {false, true}) {
    double correct = 0;
    std::vector<std::vector<double>> expected;
    for (const Question& q : questions) {
      std::vector<double> scores;
      for (std::int64_t candidate : q.candidates) {
        double sum = 0;
        for (std::int64_t item : q.items) {
          const std::int64_t c =
              conditioned ? pair_condition[types[item]][types[candidate]].item<std::int64_t>() : 0;
          double d2 = 0;
          for (std::int64_t x = 0; x < dim; ++x)
            d2 += std::pow(psi[item][c][x].item<double>() - psi[candidate][c][x].item<double>(), 2);
          sum += std::sqrt(d2);
        }
        scores.push_back(sum);
      }
      const auto best = std::min_element(scores.begin(), scores.end()) - scores.begin();
      // float32 distances of ~2 over 3 dimensions are off by ~1e-6, a sum of 5 by ~5e-6: the
      // choice is the reference's wherever the two best are 1e-4 apart, as in this draw.
      std::vector<double> sorted = scores;
      std::sort(sorted.begin(), sorted.end());
      ASSERT_GT(sorted[1] - sorted[0], 1e-4);
      correct += best == q.answer;
      expected.push_back(scores);
    }
    std::unique_ptr<ConditionModule> module;
    if (conditioned)
      module = std::make_unique<ConditionPicker>(k, dim);
    else
      module = std::make_unique<wscsl::testing::TableModule>(k, dim,
                                                             std::vector<double>{1, 0, 0, 0, 0, 0});
    wscsl::testing::ScratchDir dir("fitb_naive");
    const EvalReport r = wscsl::testing::run_evaluator(*e, *module, data, t, t, true, dir.path());
    EXPECT_DOUBLE_EQ(metric(r, "accuracy"), correct / 30) << conditioned;
    const auto rows = read_tsv(dir.path() / "fill_in_the_blank.tsv");
    ASSERT_EQ(rows.size(), 31u);
    for (std::size_t q = 0; q < 30; ++q)
      for (std::size_t a = 0; a < 4; ++a)
        EXPECT_NEAR(std::stod(rows[q + 1][8 + a]), expected[q][a], 1e-5) << q << " " << a;
  }
}

// The picture: question items with the blank at its position, then the candidates; the right
// one framed green, a wrong choice red.
TEST(FillInTheBlank, PictureMarksTheRightAndTheChosenCandidate) {
  const LineCase c;
  auto data = wscsl::testing::three_type_outfit_dataset(8, outfits(c.types, c.questions));
  auto e = wscsl::testing::build<Evaluator>("fill_in_the_blank", "shown = 2\ncell = 16");
  wscsl::testing::TableModule weak(1, 1, {1.0});
  const EmbeddingTable t = outfit_table(c.psi);
  wscsl::testing::ScratchDir dir("fitb_picture");
  const EvalReport r = wscsl::testing::run_evaluator(*e, weak, data, t, t, true, dir.path());
  ASSERT_EQ(r.artifacts.size(), 2u);
  const plot::Canvas png = plot::Canvas::read_png(dir.path() / "fill_in_the_blank.png");
  // 16-pixel cells in 3-pixel frames 4 apart: a pitch of 26; rows of 18 + 26 + 14 pixels under
  // a 30-pixel title; the widest question has 2 items, so candidates start at 4 + 3·26 + 13.
  const int pitch = 26, left = 4 + 3 * pitch + 13;
  EXPECT_EQ(png.width(), left + 4 * pitch + 4);
  EXPECT_EQ(png.height(), 30 + 2 * 58);
  const auto frame = [&](int question, int column) {
    return png.pixel(left + column * pitch + 1, 30 + question * 58 + 18 + 1);
  };
  EXPECT_EQ(frame(0, 1), plot::kGreen);  // question 1: chosen and right
  EXPECT_NE(frame(0, 0), plot::kRed);
  EXPECT_EQ(frame(1, 0), plot::kGreen);  // question 2: right is column 1, chosen column 4
  EXPECT_EQ(frame(1, 3), plot::kRed);
  EXPECT_NE(frame(1, 1), plot::kRed);
  // The blank of question 1 (position 3, after both items) is a light grey cell.
  EXPECT_EQ(png.pixel(4 + 2 * pitch + 3 + 2, 30 + 18 + 3 + 2), plot::kLightGray);
}

// The pictures show what the dataset gave the model with its declared normalisation undone. The
// fixture's images are 0.5 everywhere but their first value (the image's id); a dataset declaring
// ImageNet's normalisation gave the model (x/255 − mean)/std = 0.5, so a cell's centre shows
// x/255 = 0.5·std + mean: red 0.5·0.229 + 0.485 = 0.5995 → 153 of 255, green 0.568 → 145, blue
// 0.5185 → 132 — not the 0.5 as given (gray 128), nor the image stretched to its own range.
TEST(FillInTheBlank, ShowsTheImagesWithTheDatasetsNormalisationUndone) {
  const LineCase c;
  DatasetInfo info = wscsl::testing::three_type_outfit_info();
  info.images.normalization = PixelNormalization::ImageNet;
  SplitData split;
  split.num_images = 8;
  split.triplets = torch::zeros({0, 3}, torch::kLong);
  split.outfits = outfits(c.types, c.questions);
  wscsl::testing::FixedDataset data(info, {{Split::Test, split}});
  auto e = wscsl::testing::build<Evaluator>("fill_in_the_blank", "shown = 1\ncell = 16");
  wscsl::testing::TableModule weak(1, 1, {1.0});
  const EmbeddingTable t = outfit_table(c.psi);
  wscsl::testing::ScratchDir dir("fitb_normalisation");
  wscsl::testing::run_evaluator(*e, weak, data, t, t, true, dir.path());
  const plot::Canvas png = plot::Canvas::read_png(dir.path() / "fill_in_the_blank.png");
  // Centres of 16-pixel cells in 3-pixel frames, pitch 26, under the 30-pixel title and the
  // 18-pixel heading: question 1's first item (image 0), and its first candidate (image 3, whose
  // first value 3 is far outside [0, 1]) right of the two items and half a pitch.
  const int pitch = 26, centre_y = 30 + 18 + 3 + 8;
  const plot::Color expected{153, 145, 132};
  for (const int x : {4 + 3 + 8, 4 + 3 * pitch + 13 + 3 + 8}) {
    const plot::Color shown = png.pixel(x, centre_y);
    EXPECT_EQ(shown, expected) << "at x " << x << ": " << int(shown.r) << " " << int(shown.g) << " "
                               << int(shown.b);
  }
}

TEST(FillInTheBlank, RefusesWhatItCannotScoreInOneSentence) {
  const LineCase c;
  const EmbeddingTable t = outfit_table(c.psi);
  wscsl::testing::TableModule weak(1, 1, {1.0});
  const auto message = [&](const std::string& options, std::optional<OutfitData> o) {
    auto data = wscsl::testing::three_type_outfit_dataset(8, std::move(o));
    auto e = wscsl::testing::build<Evaluator>("fill_in_the_blank", options);
    try {
      wscsl::testing::run_evaluator(*e, weak, data, t, t, false);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message("types = [\"scarves\"]", outfits(c.types, c.questions)),
            "fill_in_the_blank: `types` lists 'scarves', which is not an item type of the dataset "
            "(its types: a, b, c)");
  EXPECT_EQ(message("", outfits(c.types, {{{}, {0, 1, 2, 3}, 0, 1}})),
            "fill_in_the_blank: split 'test': fill-in-the-blank question 1 has 0 items: a "
            "candidate's score is its summed distance to the question's items");
  EXPECT_EQ(message("", outfits(c.types, {})),
            "fill_in_the_blank: split 'test' has no fill-in-the-blank questions");
  EXPECT_EQ(message("", std::nullopt), "fill_in_the_blank: split 'test' has no outfits");
  // A module that cannot score pairs is refused by `wscsl check`, before anything trains.
  EXPECT_TRUE(wscsl::testing::build<Evaluator>("fill_in_the_blank")
                  ->contract()
                  .needs_resource(Resource::PairScores));
  // So is a split without questions (test_outfit_releases.cpp runs `check` on one).
  EXPECT_TRUE(wscsl::testing::build<Evaluator>("fill_in_the_blank")
                  ->contract()
                  .needs_resource(Resource::BlankQuestions));
  const Diagnostics d = wscsl::testing::bind_diagnostics(
      Kind::Evaluator, "fill_in_the_blank", "types = [\"a\", \"a\"]\nfile = \"x/y.tsv\"");
  EXPECT_EQ(d.error_count(), 2u) << d.format();
}
