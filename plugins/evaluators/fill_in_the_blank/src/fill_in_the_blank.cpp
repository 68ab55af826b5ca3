#include "fill_in_the_blank.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "wscsl/eval/outfit_scoring.hpp"
#include "wscsl/plot/canvas.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::fill_in_the_blank {
namespace {

constexpr int kFrame = 3;  // frame of the right and the wrongly chosen candidate, pixels
constexpr int kGap = 4;
constexpr int kHeading = 18;  // the line above each question
constexpr int kScoreLine = 14;

bool is_file_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos;
}

struct Results {
  const BlankQuestions& blanks;
  outfit::BlankScores scores;
  torch::Tensor correct;      // [Q] bool
  torch::Tensor right_items;  // [Q] image id of the right answer
  torch::Tensor right_types;  // [Q] its item type
};

std::string results_tsv(const Results& r, const std::vector<std::string>& type_names) {
  const std::int64_t questions = r.blanks.questions.size();
  const std::int64_t answers = r.blanks.candidates.size(1);
  std::string text =
      "question\tblank_position\tchosen\tright\tcorrect\tchosen_item\tright_item\t"
      "right_type";
  for (std::int64_t a = 0; a < answers; ++a)
    text += fmt::format("\tscore_{}", a + 1);
  text += '\n';
  const auto chosen = r.scores.chosen.accessor<std::int64_t, 1>();
  const auto right = r.blanks.answers.accessor<std::int64_t, 1>();
  const auto position = r.blanks.blank_positions.accessor<std::int64_t, 1>();
  const auto candidates = r.blanks.candidates.accessor<std::int64_t, 2>();
  const auto type = r.right_types.accessor<std::int64_t, 1>();
  const auto score = r.scores.scores.accessor<double, 2>();
  for (std::int64_t q = 0; q < questions; ++q) {
    const std::string type_name =
        type[q] >= 0 && type[q] < static_cast<std::int64_t>(type_names.size())
            ? type_names[static_cast<std::size_t>(type[q])]
            : std::string("-");
    text += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}", q + 1, position[q], chosen[q] + 1,
                        right[q] + 1, chosen[q] == right[q] ? 1 : 0, candidates[q][chosen[q]],
                        candidates[q][right[q]], type_name);
    for (std::int64_t a = 0; a < answers; ++a)
      text += fmt::format("\t{:.9g}", score[q][a]);
    text += '\n';
  }
  return text;
}

// One row per question: its items with the blank at its position, then the candidates with their
// scores, the right one framed green and a wrong choice red.
void draw_questions(const Results& r, std::int64_t shown, int cell, Dataset& dataset, Split split,
                    const std::filesystem::path& path) {
  const BlankQuestions& b = r.blanks;
  // Pictures of what the dataset gives the model: its normalisation undone.
  const ImagePreparation preparation = dataset.info().images;
  const auto pictures = [&](const torch::Tensor& ids) {
    return shown_pixels(preparation, dataset.images(split, ids, {}));
  };
  const auto offsets = b.questions.offsets.accessor<std::int64_t, 1>();
  const std::int64_t answers = b.candidates.size(1);
  std::int64_t widest = 0;
  for (std::int64_t q = 0; q < shown; ++q)
    widest = std::max(widest, offsets[q + 1] - offsets[q]);
  const int pitch = cell + 2 * kFrame + kGap;
  const int row_height = kHeading + pitch + kScoreLine;
  const int candidates_left = kGap + static_cast<int>(widest + 1) * pitch + pitch / 2;
  plot::Canvas canvas(candidates_left + static_cast<int>(answers) * pitch + kGap,
                      30 + static_cast<int>(shown) * row_height);
  canvas.text(fmt::format("Fill in the blank on '{}' (green: right answer; red: a wrong choice; "
                          "scores: summed distance)",
                          split_name(split)),
              8, 20, plot::kBlack, 0.4);
  const auto chosen = r.scores.chosen.accessor<std::int64_t, 1>();
  const auto right = b.answers.accessor<std::int64_t, 1>();
  const auto position = b.blank_positions.accessor<std::int64_t, 1>();
  const auto score = r.scores.scores.accessor<double, 2>();
  for (std::int64_t q = 0; q < shown; ++q) {
    const int top = 30 + static_cast<int>(q) * row_height;
    canvas.text(fmt::format("question {}: chose {}, right {} ({})", q + 1, chosen[q] + 1,
                            right[q] + 1, chosen[q] == right[q] ? "correct" : "wrong"),
                kGap, top + kHeading - 5, plot::kBlack, 0.4);
    const int y = top + kHeading;
    const torch::Tensor items = b.questions.items.slice(0, offsets[q], offsets[q + 1]);
    const torch::Tensor item_images = pictures(items);
    const std::int64_t n = items.size(0);
    const std::int64_t blank = std::clamp<std::int64_t>(position[q] - 1, 0, n);
    for (std::int64_t slot = 0, i = 0; slot <= n; ++slot) {
      const int x = kGap + static_cast<int>(slot) * pitch;
      if (slot == blank) {
        canvas.rectangle(x + kFrame, y + kFrame, cell, cell, plot::kLightGray, -1);
        canvas.text("?", x + kFrame + cell / 2 - 4, y + kFrame + cell / 2 + 6, plot::kGray, 0.6);
        continue;
      }
      canvas.rectangle(x + kFrame - 1, y + kFrame - 1, cell + 2, cell + 2, plot::kBlack, 1);
      canvas.image(item_images[i++], x + kFrame, y + kFrame, cell, cell);
    }
    const torch::Tensor candidate_images = pictures(b.candidates[q]);
    for (std::int64_t a = 0; a < answers; ++a) {
      const int x = candidates_left + static_cast<int>(a) * pitch;
      if (a == right[q])
        canvas.rectangle(x, y, cell + 2 * kFrame, cell + 2 * kFrame, plot::kGreen, kFrame);
      else if (a == chosen[q])
        canvas.rectangle(x, y, cell + 2 * kFrame, cell + 2 * kFrame, plot::kRed, kFrame);
      else
        canvas.rectangle(x + kFrame - 1, y + kFrame - 1, cell + 2, cell + 2, plot::kGray, 1);
      canvas.image(candidate_images[a], x + kFrame, y + kFrame, cell, cell);
      canvas.text(fmt::format("{:.3f}", score[q][a]), x + kFrame, y + pitch + kScoreLine - 6,
                  plot::kBlack, 0.35);
    }
  }
  canvas.save_png(path);
}

}  // namespace

Schema<FillInTheBlankOptions> FillInTheBlank::schema() {
  using O = FillInTheBlankOptions;
  Schema<O> s(
      "Fill-in-the-blank accuracy (Vasileva et al. 2018): each candidate scores its summed "
      "distance to the question's items, each pair under the condition of its type pair; the "
      "smallest (the first of equal ones) is chosen.");
  s.field("types", &O::types,
          "Item types whose questions get an accuracy of their own, `accuracy/<type>`: the "
          "questions whose right answer is of that type (SCE-Net's unseen categories: "
          "[\"scarves\", \"accessories\"]).");
  s.field("file", &O::file,
          "Per-question results (chosen and right column, correct, every candidate's score), a "
          "TSV under the run's plots directory, written in the final evaluation.");
  s.field("shown", &O::shown,
          "Questions drawn in the picture (the split's first ones; 0 draws none), in the final "
          "evaluation.")
      .min(0)
      .max(100);
  s.field("cell", &O::cell, "Side of one image in the picture, pixels.").min(16).max(512);
  s.field("picture", &O::picture, "PNG file name of the picture under the run's plots directory.");
  s.check([](const O& o, FieldChecker& c) {
    std::set<std::string> seen;
    for (const std::string& t : o.types)
      if (!seen.insert(t).second) c.error("types", fmt::format("lists '{}' twice", t));
    if (!is_file_name(o.file)) c.error("file", "must be a file name without a directory");
    if (!is_file_name(o.picture)) c.error("picture", "must be a file name without a directory");
  });
  return s;
}

Contract FillInTheBlank::contract_of(const Options& options) {
  Contract c;
  c.needs = {{Resource::Outfits}, {Resource::PairScores}, {Resource::BlankQuestions}};
  c.metrics = {{"accuracy", "FITB"}};
  for (const std::string& t : options.types) {
    c.metrics.push_back({"accuracy/" + t, "FITB " + t});
    c.needs.push_back({Resource::ItemType, t});
  }
  return c;
}

EvalReport FillInTheBlank::evaluate_impl(EvalContext& context) {
  const EmbeddingTable& table = context.target;
  const std::string where = fmt::format("fill_in_the_blank: split '{}'", split_name(table.split));
  const std::vector<std::string>& type_names = context.info.item_types;
  std::vector<std::int64_t> type_indices;
  for (const std::string& t : options_.types) {
    const auto it = std::find(type_names.begin(), type_names.end(), t);
    if (it == type_names.end())
      throw Error(
          fmt::format("fill_in_the_blank: `types` lists '{}', which is not an item type "
                      "of the dataset ({})",
                      t,
                      type_names.empty() ? std::string("it has none")
                                         : "its types: " + join(type_names, ", ")));
    type_indices.push_back(it - type_names.begin());
  }
  const SplitData& data = context.dataset.split(table.split);
  if (!data.outfits) throw Error(where + " has no outfits");
  BlankQuestions blanks = data.outfits->blanks;
  blanks.answers = blanks.answers.to(torch::kLong);
  blanks.blank_positions = blanks.blank_positions.to(torch::kLong);
  const std::int64_t questions = blanks.questions.size();
  if (questions == 0) throw Error(where + " has no fill-in-the-blank questions");

  const outfit::PairScorer scorer(context.module, table, *data.outfits, context.batch_size,
                                  "fill_in_the_blank");
  Results r{blanks,
            outfit::score_blanks(scorer, blanks, where + ": fill-in-the-blank question"),
            {},
            {},
            {}};
  r.correct = r.scores.chosen == blanks.answers;
  r.right_items = blanks.candidates.gather(1, blanks.answers.unsqueeze(1)).squeeze(1);
  r.right_types = data.outfits->item_types.index_select(0, r.right_items);

  EvalReport report;
  const double accuracy = r.correct.to(torch::kDouble).mean().item<double>();
  report.metrics.push_back({"accuracy", accuracy});
  ReportTable t;
  t.title = fmt::format("Fill in the blank on '{}'", split_name(table.split));
  t.header = {"questions of", "accuracy", "questions"};
  for (std::size_t i = 0; i < options_.types.size(); ++i) {
    const torch::Tensor of_type = r.right_types == type_indices[i];
    const std::int64_t count = of_type.sum().item<std::int64_t>();
    if (count == 0) {
      t.rows.push_back({options_.types[i], "-", "0"});
      continue;
    }
    const double acc = r.correct.index({of_type}).to(torch::kDouble).mean().item<double>();
    report.metrics.push_back({"accuracy/" + options_.types[i], acc});
    t.rows.push_back({options_.types[i], fmt::format("{:.4f}", acc), std::to_string(count)});
  }
  t.rows.push_back({"all", fmt::format("{:.4f}", accuracy), std::to_string(questions)});
  report.tables.push_back(std::move(t));

  if (context.final_evaluation && !context.artifact_dir.empty()) {
    std::filesystem::create_directories(context.artifact_dir);
    const std::filesystem::path file = context.artifact_dir / options_.file;
    write_file_atomically(file, results_tsv(r, type_names));
    report.artifacts.push_back(file);
    if (options_.shown > 0) {
      const std::filesystem::path picture = context.artifact_dir / options_.picture;
      draw_questions(r, std::min(options_.shown, questions), static_cast<int>(options_.cell),
                     context.dataset, table.split, picture);
      report.artifacts.push_back(picture);
    }
  }
  return report;
}

}  // namespace wscsl::fill_in_the_blank

WSCSL_PLUGIN(fill_in_the_blank, "0.1.0",
             "Fill-in-the-blank accuracy (smallest summed distance to the question's items)") {
  registrar.add<wscsl::Evaluator, wscsl::fill_in_the_blank::FillInTheBlank>("fill_in_the_blank");
}
