#include "embedding_plot.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "projection.hpp"
#include "wscsl/eval/aligned.hpp"
#include "wscsl/plot/chart.hpp"
#include "wscsl/util/rng.hpp"

namespace wscsl::embedding_plot {
namespace {

constexpr double kLegendScale = 0.35;

std::vector<double> column(const torch::Tensor& points, std::int64_t c) {
  const torch::Tensor v = points.select(1, c).contiguous();
  return std::vector<double>(v.data_ptr<double>(), v.data_ptr<double>() + v.numel());
}

std::string value_name(const ConditionInfo& condition, std::int64_t value) {
  if (value < 0) return "unknown";
  const auto v = static_cast<std::size_t>(value);
  return v < condition.values.size() ? condition.values[v] : std::to_string(value);
}

// Colours of the points by their value of a condition (-1: no condition), and the legend.
struct Colouring {
  std::vector<plot::Color> colors;
  std::vector<std::pair<std::string, plot::Color>> legend;
};

Colouring colouring(const torch::Tensor& factors, std::int64_t condition, const DatasetInfo& info) {
  Colouring out;
  if (condition < 0) {
    out.colors.assign(static_cast<std::size_t>(factors.size(0)), plot::kGray);
    out.legend = {{"no condition", plot::kGray}};
    return out;
  }
  const torch::Tensor values = factors.select(1, condition).contiguous();
  const std::int64_t* v = values.data_ptr<std::int64_t>();
  const ConditionInfo& c = info.conditions[static_cast<std::size_t>(condition)];
  for (std::int64_t i = 0; i < values.numel(); ++i)
    out.colors.push_back(v[i] < 0 ? plot::kGray : plot::palette(static_cast<std::size_t>(v[i])));
  std::vector<std::int64_t> present(v, v + values.numel());
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  for (std::int64_t value : present)
    out.legend.push_back(
        {value_name(c, value),
         value < 0 ? plot::kGray : plot::palette(static_cast<std::size_t>(value))});
  return out;
}

int legend_width(const DatasetInfo& info) {
  int widest = plot::Canvas::text_width("no condition", kLegendScale);
  for (const ConditionInfo& c : info.conditions)
    for (std::size_t v = 0; v < std::max<std::size_t>(c.values.size(), 1); ++v)
      widest = std::max(widest, plot::Canvas::text_width(
                                    value_name(c, static_cast<std::int64_t>(v)), kLegendScale));
  return widest + 24;
}

}  // namespace

const EnumChoices<Projection>& projection_choices() {
  static const EnumChoices<Projection> choices = {
      {Projection::Tsne, "tsne", "exact t-SNE"},
      {Projection::Pca, "pca", "the two leading principal axes"}};
  return choices;
}

Contract EmbeddingPlot::contract_of(const Options& options) {
  Contract c;
  c.needs = {{Resource::ImageFactors}, aligned::alignment_need(options.alignment)};
  c.table_rows = {{2, "the projection's two points"}};
  return c;
}

Schema<EmbeddingPlotOptions> EmbeddingPlot::schema() {
  using O = EmbeddingPlotOptions;
  Schema<O> s(
      "A 2-D projection of each learned embedding of the evaluated split's images, coloured by the "
      "values of the condition aligned to it (DiscoverNet Fig. 5), written as a PNG.");
  s.field("projection", &O::projection,
          "\"tsne\": exact t-SNE (O(points²) per iteration); \"pca\": the two leading principal "
          "axes (fast).",
          projection_choices());
  s.field("points", &O::points, "Images plotted: a seeded sample of the split (all if fewer).")
      .min(2);
  s.field("seed", &O::seed, "Seed of the sample and of t-SNE's initial layout.").min(0);
  const auto tsne = [](const O& o) { return o.projection == Projection::Tsne; };
  s.field("perplexity", &O::perplexity,
          "t-SNE perplexity (lowered to (points − 1) / 3 when larger).")
      .greater_than(0.0)
      .only_when("projection = \"tsne\"", tsne);
  s.field("iterations", &O::iterations, "t-SNE gradient steps (the first 250 exaggerated).")
      .min(1)
      .only_when("projection = \"tsne\"", tsne);
  s.field("alignment", &O::alignment,
          "Published alignment that names each embedding's condition (from an earlier "
          "`alignment` evaluator).",
          aligned::strategy_choices());
  s.field("panels", &O::panels,
          "\"aligned\": one panel per embedding, coloured by its aligned condition; \"all\": one "
          "row per embedding and one column per condition.",
          EnumChoices<Panels>{
              {Panels::Aligned, "aligned", "one panel per embedding, its aligned condition"},
              {Panels::All, "all", "one panel per embedding and condition"}});
  s.field("file", &O::file,
          "PNG file name under the run's plots directory (default: embeddings_<projection>.png).");
  s.field("panel_size", &O::panel_size, "Side of one panel in pixels.").min(120).max(2000);
  return s;
}

std::string EmbeddingPlot::projection_title() const {
  switch (options_.projection) {
    case Projection::Tsne:
      return "t-SNE";
    case Projection::Pca:
      return "PCA";
  }
  return "";
}

torch::Tensor EmbeddingPlot::project(const torch::Tensor& x, const TsneOptions& tsne) const {
  switch (options_.projection) {
    case Projection::Tsne:
      return tsne_2d(x, tsne);
    case Projection::Pca:
      return pca_2d(x);
  }
  return {};
}

EvalReport EmbeddingPlot::evaluate_impl(EvalContext& context) {
  const EmbeddingTable& table = context.target;
  if (context.artifact_dir.empty())
    throw Error("embedding_plot: no artefact directory to write the picture to");
  if (!table.factors.defined())
    throw Error(fmt::format(
        "embedding_plot: split '{}' has no per-image factor labels to colour the points with",
        split_name(table.split)));
  const aligned::AlignedEmbeddings aligned =
      aligned::aligned_embeddings(context, options_.alignment, "embedding_plot");
  const std::int64_t images = table.items.psi.size(0);
  const std::int64_t count = std::min(options_.points, images);
  if (count < 2)
    throw Error(fmt::format("embedding_plot: split '{}' has {} image(s); a projection needs two",
                            split_name(table.split), images));
  const torch::Tensor rows = std::get<0>(
      torch::tensor(seeded_permutation(static_cast<std::uint64_t>(options_.seed), images))
          .slice(0, 0, count)
          .sort());
  const torch::Tensor psi = table.items.psi.index_select(0, rows);
  const torch::Tensor factors = table.factors.index_select(0, rows);

  const std::int64_t embeddings = psi.size(1);
  const auto conditions = static_cast<std::int64_t>(context.info.conditions.size());
  const bool all = options_.panels == Panels::All;
  const std::int64_t panel_count = all ? embeddings * conditions : embeddings;
  const std::int64_t columns = all ? conditions : std::min<std::int64_t>(embeddings, 4);
  const std::int64_t panel_rows = (panel_count + columns - 1) / columns;
  const int side = static_cast<int>(options_.panel_size), legend = legend_width(context.info);
  const int header = 30, cell_w = side + legend;
  plot::Canvas canvas(static_cast<int>(columns) * cell_w,
                      header + static_cast<int>(panel_rows) * side);
  const std::string name = projection_title();
  canvas.text(fmt::format("{} of each embedding, {} images of '{}', colours: {}", name, count,
                          split_name(table.split), all ? "each condition" : aligned.source),
              8, 20, plot::kBlack, 0.5);

  TsneOptions tsne;
  tsne.perplexity = options_.perplexity;
  tsne.iterations = options_.iterations;
  tsne.seed = static_cast<std::uint64_t>(options_.seed);
  for (std::int64_t k = 0; k < embeddings; ++k) {
    const torch::Tensor x = psi.select(1, k);
    const torch::Tensor projected = project(x, tsne);
    const std::vector<double> xs = column(projected, 0), ys = column(projected, 1);
    for (std::int64_t c = 0; c < (all ? conditions : 1); ++c) {
      const std::int64_t condition =
          all ? c : aligned.condition_of_embedding[static_cast<std::size_t>(k)];
      const std::int64_t panel = all ? k * conditions + c : k;
      const int x0 = static_cast<int>(panel % columns) * cell_w;
      const int y0 = header + static_cast<int>(panel / columns) * side;
      const std::string condition_name =
          condition < 0 ? "no condition"
                        : context.info.conditions[static_cast<std::size_t>(condition)].name;
      const bool matched = condition >= 0 &&
                           aligned.condition_of_embedding[static_cast<std::size_t>(k)] == condition;
      plot::Axes axes(canvas, {x0, y0, side, side}, plot::range_of(xs), plot::range_of(ys),
                      fmt::format("psi{}: {}{}", k + 1, condition_name, all && matched ? " *" : ""),
                      "", "", false);
      const Colouring colours = colouring(factors, condition, context.info);
      axes.scatter(xs, ys, colours.colors, 2);
      plot::legend(canvas, x0 + side + 4, axes.frame().y, colours.legend, kLegendScale);
    }
  }
  const std::string file =
      options_.file.empty()
          ? "embeddings_" + spelling_of(projection_choices(), options_.projection) + ".png"
          : options_.file;
  const std::filesystem::path path = context.artifact_dir / file;
  canvas.save_png(path);
  EvalReport report;
  report.artifacts.push_back(path);
  return report;
}

}  // namespace wscsl::embedding_plot

WSCSL_PLUGIN(embedding_plot, "0.1.0", "t-SNE / PCA pictures of each embedding, by condition") {
  registrar.add<wscsl::Evaluator, wscsl::embedding_plot::EmbeddingPlot>("embedding_plot");
}
