#include "outfit_compatibility.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "wscsl/eval/outfit_scoring.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace wscsl::outfit_compatibility {

Schema<OutfitCompatibilityOptions> OutfitCompatibility::schema() {
  using O = OutfitCompatibilityOptions;
  Schema<O> s(
      "Outfit compatibility AUC (Vasileva et al. 2018): each compatibility line scores 1 − the "
      "mean distance over its unordered item pairs, each pair under the condition of its type "
      "pair; ROC AUC over the lines' labels, ties counted as sklearn's roc_auc_score.");
  s.field("file", &O::file,
          "Per-line results (line, label, items, mean distance, score), a TSV under the run's "
          "plots directory, written in the final evaluation.");
  s.check([](const O& o, FieldChecker& c) {
    if (o.file.empty() || o.file.find('/') != std::string::npos)
      c.error("file", "must be a file name without a directory");
  });
  return s;
}

Contract OutfitCompatibility::contract_of(const Options&) {
  Contract c;
  c.needs = {{Resource::Outfits}, {Resource::PairScores}, {Resource::CompatibilityLines}};
  c.metrics = {{"auc", "compat. AUC"}};
  return c;
}

EvalReport OutfitCompatibility::evaluate_impl(EvalContext& context) {
  const EmbeddingTable& table = context.target;
  const std::string where =
      fmt::format("outfit_compatibility: split '{}'", split_name(table.split));
  const SplitData& data = context.dataset.split(table.split);
  if (!data.outfits) throw Error(where + " has no outfits");
  const CompatibilityLines& lines = data.outfits->compatibility;
  if (lines.outfits.size() == 0) throw Error(where + " has no compatibility lines");
  const torch::Tensor labels = lines.labels.to(torch::kLong);
  const std::int64_t positives = labels.sum().item<std::int64_t>();
  const std::int64_t negatives = lines.outfits.size() - positives;
  if (positives == 0 || negatives == 0)
    throw Error(fmt::format("{} has {} compatible and {} incompatible lines: the AUC needs both",
                            where, positives, negatives));

  const outfit::PairScorer scorer(context.module, table, *data.outfits, context.batch_size,
                                  "outfit_compatibility");
  const torch::Tensor distance =
      outfit::mean_pair_distances(scorer, lines.outfits, where + ": compatibility line");
  const torch::Tensor score = 1.0 - distance;
  const double auc = outfit::roc_auc(score, labels);

  EvalReport report;
  report.metrics.push_back({"auc", auc});
  const torch::Tensor good = labels == 1;
  ReportTable t;
  t.title = fmt::format("Outfit compatibility on '{}'", split_name(table.split));
  t.header = {"lines", "compatible", "mean distance (compatible)", "mean distance (not)", "AUC"};
  t.rows.push_back({std::to_string(lines.outfits.size()), std::to_string(positives),
                    fmt::format("{:.4f}", distance.index({good}).mean().item<double>()),
                    fmt::format("{:.4f}", distance.index({~good}).mean().item<double>()),
                    fmt::format("{:.4f}", auc)});
  report.tables.push_back(std::move(t));

  if (context.final_evaluation && !context.artifact_dir.empty()) {
    const torch::Tensor sizes =
        lines.outfits.offsets.slice(0, 1) - lines.outfits.offsets.slice(0, 0, -1);
    std::string text = "line\tlabel\titems\tmean_distance\tscore\n";
    const auto label = labels.accessor<std::int64_t, 1>();
    const auto n = sizes.accessor<std::int64_t, 1>();
    const auto d = distance.accessor<double, 1>();
    for (std::int64_t l = 0; l < lines.outfits.size(); ++l)
      text += fmt::format("{}\t{}\t{}\t{:.9g}\t{:.9g}\n", l + 1, label[l], n[l], d[l], 1.0 - d[l]);
    std::filesystem::create_directories(context.artifact_dir);
    const std::filesystem::path path = context.artifact_dir / options_.file;
    write_file_atomically(path, text);
    report.artifacts.push_back(path);
  }
  return report;
}

}  // namespace wscsl::outfit_compatibility

WSCSL_PLUGIN(outfit_compatibility, "0.1.0",
             "Outfit compatibility AUC (mean pair distance per outfit)") {
  registrar.add<wscsl::Evaluator, wscsl::outfit_compatibility::OutfitCompatibility>(
      "outfit_compatibility");
}
