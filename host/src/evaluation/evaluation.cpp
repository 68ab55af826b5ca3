#include "evaluation.hpp"

#include <torch/utils.h>

#include <fmt/format.h>

#include "evaluation/split_check.hpp"
#include "pipeline/item_forward.hpp"

namespace wscsl::host {

namespace {

// The rows of every process, in rank order: this process's `mine`, whose rows are [0, shape].
torch::Tensor gathered(const Communicator& comm, const torch::Tensor& mine,
                       std::vector<std::int64_t> shape) {
  return comm.gather_rows(mine.defined() ? mine : torch::zeros(shape));
}

// The items of every process, in rank order, on the CPU: this process's `mine`.
ItemFeatures gathered(const Pipeline& pipeline, const Communicator& comm,
                      const ItemFeatures& mine) {
  const ConditionModule& m = *pipeline.condition_module;
  ItemFeatures all;
  all.phi = gathered(comm, mine.phi, {0, pipeline.backbone->embedding_dim()});
  all.psi = gathered(comm, mine.psi, {0, m.num_embeddings(), m.output_dim()});
  for (const NamedTextEncoder& t : pipeline.text_encoders) {
    const auto it = mine.texts.find(t.name);
    const bool any = it != mine.texts.end();
    // Presence travels as floats: the rows gathered from every process are float tensors.
    const torch::Tensor present = gathered(
        comm, any ? it->second.present.to(torch::kFloat).unsqueeze(1) : torch::Tensor(), {0, 1});
    all.texts[t.name] = {
        gathered(comm, any ? it->second.features : torch::Tensor(), {0, t.encoder->output_dim()}),
        present.squeeze(1) > 0.5};
  }
  return all;
}

}  // namespace

EvaluatedImages evaluated_images(const SplitData& data) {
  std::vector<torch::Tensor> referenced{data.triplets.reshape({-1})};
  if (data.outfits) {
    const OutfitData& o = *data.outfits;
    referenced.insert(referenced.end(), {o.compatibility.outfits.items, o.blanks.questions.items,
                                         o.blanks.candidates.reshape({-1})});
  }
  if (data.attribute_queries)
    referenced.insert(referenced.end(), {data.attribute_queries->queries.select(1, 0),
                                         data.attribute_queries->candidates.select(1, 0)});
  auto [ids, inverse, counts] =
      at::_unique2(torch::cat(referenced), /*sorted=*/true, /*return_inverse=*/true);
  (void)counts;
  return {ids, inverse.slice(0, 0, data.triplets.numel()).reshape({-1, 3})};
}

EmbeddingTable embed_split(Pipeline& pipeline, Split split, std::int64_t batch_size,
                           const Strategy& strategy) {
  const SplitData& data = pipeline.dataset->split(split);
  check_conditions_given(pipeline, split, data);
  torch::NoGradGuard no_grad;
  const std::shared_ptr<torch::nn::Module> model = pipeline.model();
  const bool was_training = model->is_training();
  model->eval();
  EmbeddingTable table;
  table.split = split;
  const auto [ids, triplet_rows] = evaluated_images(data);
  table.image_ids = ids;
  table.triplets = Comparisons::triplets(triplet_rows);
  table.triplets.conditions = data.conditions;
  table.reversed = data.reversed;
  if (data.factors.defined()) table.factors = data.factors.index_select(0, ids);
  // Each process embeds its own contiguous shard of the images, on its device; the table stays
  // on the host, where evaluators compute.
  const Shard shard = strategy.shard(ids.size(0));
  const torch::Device device = strategy.device();
  const Embedders embedders = pipeline_embedders(pipeline);
  std::vector<ItemFeatures> chunks;
  for (std::int64_t begin = shard.first; begin < shard.last; begin += batch_size) {
    const torch::Tensor batch = ids.slice(0, begin, std::min(shard.last, begin + batch_size));
    const ItemInputs inputs{pipeline.dataset->images(split, batch, ImageRequest{}).to(device),
                            field_texts(pipeline, data, batch)};
    chunks.push_back(forward_items(pipeline, {inputs}, embedders).to(torch::kCPU));
  }
  table.items = gathered(pipeline, strategy.comm(),
                         chunks.empty() ? ItemFeatures{} : ItemFeatures::concatenated(chunks));
  if (was_training) model->train();
  return table;
}

const NamedMetric* EvaluationResult::find(const std::string& name) const {
  for (const NamedMetric& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

EvaluationResult evaluate(Pipeline& pipeline, const EmbeddingTable& fit,
                          const EmbeddingTable& target, bool final,
                          const std::filesystem::path& artifact_dir) {
  torch::NoGradGuard no_grad;
  const bool was_training = pipeline.condition_module->is_training();
  pipeline.condition_module->eval();
  const DatasetInfo info = pipeline.dataset->info();
  std::map<std::string, torch::Tensor> shared;
  EvaluationResult result;
  for (NamedEvaluator& e : pipeline.evaluators) {
    if (!final && !e.evaluator->runs_during_validation()) continue;
    EvalContext context{
        fit,    target, *pipeline.condition_module,      *pipeline.dataset, info, artifact_dir,
        shared, final,  pipeline.trainer.eval_batch_size};
    EvalReport report = e.evaluator->evaluate(context);
    for (const Metric& m : report.metrics)
      result.metrics.push_back({e.name + "/" + m.name, m.value});
    for (ReportTable& t : report.tables)
      result.tables.push_back(std::move(t));
    for (auto& a : report.artifacts)
      result.artifacts.push_back(std::move(a));
  }
  if (was_training) pipeline.condition_module->train();
  return result;
}

std::map<std::string, torch::Tensor> published_alignments(Pipeline& pipeline,
                                                          const EmbeddingTable& fit,
                                                          const EmbeddingTable& target) {
  torch::NoGradGuard no_grad;
  const bool was_training = pipeline.condition_module->is_training();
  pipeline.condition_module->eval();
  const DatasetInfo info = pipeline.dataset->info();
  std::map<std::string, torch::Tensor> shared;
  for (NamedEvaluator& e : pipeline.evaluators) {
    if (e.evaluator->contract().provided_names(Resource::Alignment).empty()) continue;
    EvalContext context{
        fit,    target, *pipeline.condition_module,      *pipeline.dataset, info, {},
        shared, false,  pipeline.trainer.eval_batch_size};
    e.evaluator->evaluate(context);
  }
  if (was_training) pipeline.condition_module->train();
  return shared;
}

namespace {

// Display width in terminal columns: count code points, not bytes.
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string pad(const std::string& s, std::size_t width) {
  return s + std::string(width - std::min(width, display_width(s)), ' ');
}

}  // namespace

std::string format_text(const std::vector<ReportTable>& tables) {
  std::string out;
  for (const ReportTable& t : tables) {
    std::vector<std::size_t> widths(t.header.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
      for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
        widths[i] = std::max(widths[i], display_width(row[i]));
    };
    measure(t.header);
    for (const auto& row : t.rows)
      measure(row);
    auto line = [&](const std::vector<std::string>& row) {
      std::string s;
      for (std::size_t i = 0; i < widths.size(); ++i)
        s += (i ? "  " : "") + pad(i < row.size() ? row[i] : "", widths[i]);
      while (!s.empty() && s.back() == ' ')
        s.pop_back();
      return s + "\n";
    };
    out += "\n" + t.title + "\n";
    out += line(t.header);
    std::size_t total = 0;
    for (std::size_t w : widths)
      total += w;
    out += std::string(total + 2 * (widths.empty() ? 0 : widths.size() - 1), '-') + "\n";
    for (const auto& row : t.rows)
      out += line(row);
  }
  return out;
}

std::string format_markdown(const std::vector<ReportTable>& tables) {
  std::string out;
  for (const ReportTable& t : tables) {
    out += "\n### " + t.title + "\n\n|";
    for (const std::string& h : t.header)
      out += " " + h + " |";
    out += "\n|";
    for (std::size_t i = 0; i < t.header.size(); ++i)
      out += i ? "---:|" : "---|";
    out += "\n";
    for (const auto& row : t.rows) {
      out += "|";
      for (const std::string& cell : row)
        out += " " + cell + " |";
      out += "\n";
    }
  }
  return out;
}

}  // namespace wscsl::host
