#include "evaluation.hpp"

#include <torch/utils.h>

#include <fmt/format.h>

#include "wscsl/nn/device.hpp"

namespace wscsl::host {

namespace {

// Each text encoder's features of the images `ids`; this process encodes rows [first, last).
std::map<std::string, TextFeatures> embed_texts(const Pipeline& pipeline, const SplitData& data,
                                                const torch::Tensor& ids, std::int64_t first,
                                                std::int64_t last, std::int64_t batch_size,
                                                const Communicator& comm) {
  std::map<std::string, TextFeatures> texts;
  for (const NamedTextEncoder& t : pipeline.text_encoders) {
    const std::vector<std::string>& all = data.texts.at(t.field);
    std::vector<torch::Tensor> features, present;
    for (std::int64_t begin = first; begin < last; begin += batch_size) {
      const TextFeatures f = t.encoder->encode(
          item_texts(all, ids.slice(0, begin, std::min(last, begin + batch_size))));
      features.push_back(f.features.cpu());
      present.push_back(f.present.cpu());
    }
    // Presence travels as floats: the rows gathered from every process are float tensors.
    const torch::Tensor gathered_present =
        comm.gather_rows(present.empty() ? torch::zeros({0, 1})
                                         : torch::cat(present).to(torch::kFloat).unsqueeze(1));
    texts[t.name] = {comm.gather_rows(features.empty() ? torch::zeros({0, t.encoder->output_dim()})
                                                       : torch::cat(features)),
                     gathered_present.squeeze(1) > 0.5};
  }
  return texts;
}

}  // namespace

EmbeddingTable embed_split(Pipeline& pipeline, const std::string& split, std::int64_t batch_size,
                           const Communicator& comm) {
  const SplitData& data = pipeline.dataset->split(split);
  torch::NoGradGuard no_grad;
  const std::shared_ptr<torch::nn::Module> model = pipeline.model();
  const bool was_training = model->is_training();
  model->eval();
  EmbeddingTable table;
  table.split = split;
  // Every image the split's triplets, compatibility lines and questions reference, once, sorted.
  std::vector<torch::Tensor> referenced{data.triplets.reshape({-1})};
  if (data.outfits) {
    const OutfitData& o = *data.outfits;
    referenced.insert(referenced.end(), {o.compatibility.outfits.items, o.blanks.questions.items,
                                         o.blanks.candidates.reshape({-1})});
  }
  auto [ids, inverse, counts] =
      at::_unique2(torch::cat(referenced), /*sorted=*/true, /*return_inverse=*/true);
  (void)counts;
  table.image_ids = ids;
  table.triplets = inverse.slice(0, 0, data.triplets.numel()).reshape({-1, 3});
  table.conditions = data.conditions;
  table.reversed = data.reversed;
  if (data.factors.defined()) table.factors = data.factors.index_select(0, ids);
  // Each process embeds its own contiguous share of the images, on the model's device; the
  // table stays on the host, where evaluators compute.
  const std::int64_t first = ids.size(0) * comm.rank() / comm.size();
  const std::int64_t last = ids.size(0) * (comm.rank() + 1) / comm.size();
  const torch::Device device = nn::device_of(*pipeline.model());
  std::vector<torch::Tensor> phi, psi;
  for (std::int64_t begin = first; begin < last; begin += batch_size) {
    const torch::Tensor batch = ids.slice(0, begin, std::min(last, begin + batch_size));
    const torch::Tensor images = pipeline.dataset->images(split, batch, ImageRequest{}).to(device);
    const torch::Tensor embedded = pipeline.backbone->embed(images);
    psi.push_back(pipeline.condition_module->embed(embedded).cpu());
    phi.push_back(embedded.cpu());
  }
  table.phi = comm.gather_rows(phi.empty() ? torch::zeros({0, pipeline.backbone->embedding_dim()})
                                           : torch::cat(phi));
  table.psi =
      comm.gather_rows(psi.empty() ? torch::zeros({0, pipeline.condition_module->num_embeddings(),
                                                   pipeline.condition_module->output_dim()})
                                   : torch::cat(psi));
  table.texts = embed_texts(pipeline, data, ids, first, last, batch_size, comm);
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

EmbeddingTable embed_split(Pipeline& pipeline, const std::string& split, std::int64_t batch_size) {
  return embed_split(pipeline, split, batch_size, *Communicator::single());
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
