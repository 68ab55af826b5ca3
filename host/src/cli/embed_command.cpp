#include "embed_command.hpp"

#include <ATen/ATen.h>

#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluation/run_evaluation.hpp"
#include "rank_job.hpp"
#include "wscsl/error.hpp"
#include "wscsl/eval/aligned.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/tensor_npy.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::int64_t> long_values(const at::Tensor& t) {
  const at::Tensor values = t.to(at::kLong).contiguous();
  return {values.data_ptr<std::int64_t>(), values.data_ptr<std::int64_t>() + values.numel()};
}

// <split>_files.json: the file of each row of the split's arrays, relative to `image_root`, for a
// dataset of image files; nothing for one whose images are generated.
void write_row_files(Dataset& dataset, const EmbeddingTable& table, const fs::path& file) {
  const std::optional<SplitAttributes> attributes = dataset.attributes(table.split);
  if (!attributes || attributes->files.empty()) return;
  Json files = Json::array();
  for (std::int64_t id : long_values(table.image_ids))
    files.push_back(attributes->files.at(static_cast<std::size_t>(id)));
  const Json document = {{"image_root", attributes->image_root.string()}, {"files", files}};
  write_file_atomically(file, document.dump(2) + "\n");
}

// The condition ↔ embedding alignment of an embedded run, for alignment.json: the identity of a
// conditioned module with one embedding per condition, else what the pipeline's alignment
// evaluators publish when fitted on the validation split (measured on the test split).
struct EmbeddedAlignment {
  bool identity = false;
  std::map<std::string, at::Tensor> published;
};

bool has_alignment_evaluator(const Pipeline& pipeline) {
  for (const NamedEvaluator& e : pipeline.evaluators)
    if (!e.evaluator->contract().provided_names(Resource::Alignment).empty()) return true;
  return false;
}

Json alignment_json(const Pipeline& pipeline, const EmbeddedAlignment& alignment) {
  const DatasetInfo info = pipeline.dataset->info();
  Json strategies = Json::object();
  if (alignment.identity) {
    std::vector<std::int64_t> identity(info.conditions.size());
    for (std::size_t c = 0; c < identity.size(); ++c)
      identity[c] = static_cast<std::int64_t>(c);
    strategies["identity"] = {{"embedding_of_condition", identity},
                              {"condition_of_embedding", identity}};
  }
  for (aligned::Strategy strategy :
       {aligned::Strategy::Ot, aligned::Strategy::Exact, aligned::Strategy::Greedy}) {
    const auto assignment = alignment.published.find(aligned::assignment_key(strategy));
    const auto inverse = alignment.published.find(aligned::condition_of_embedding_key(strategy));
    if (assignment == alignment.published.end() || inverse == alignment.published.end()) continue;
    strategies[aligned::spelling(strategy)] = {
        {"embedding_of_condition", long_values(assignment->second)},
        {"condition_of_embedding", long_values(inverse->second)}};
  }
  return {{"conditions", info.condition_names()},
          {"num_embeddings", pipeline.condition_module->num_embeddings()},
          {"fitted_on", alignment.identity || alignment.published.empty() ? "" : "val"},
          {"alignments", strategies}};
}

void check_splits_exist(const Dataset& dataset, const std::vector<Split>& splits) {
  const DatasetInfo info = dataset.info();
  for (Split split : splits)
    if (!info.has_split(split)) {
      std::vector<std::string> names;
      for (Split s : info.splits)
        names.emplace_back(split_name(s));
      throw Error(fmt::format("{} has no split '{}' (it has: {})", dataset.label(),
                              split_name(split), join(names, ", ")));
    }
}

// The arrays of `table` (the split `name`) in `out`, and its row files.
void write_split(const Pipeline& pipeline, const EmbeddingTable& table, const std::string& name,
                 const fs::path& out) {
  const auto file = [&](const std::string& what) { return out / (name + "_" + what + ".npy"); };
  const Comparisons& triplets = table.triplets;
  write_tensor_npy(file("phi"), table.items.phi);
  write_tensor_npy(file("psi"), table.items.psi);
  write_tensor_npy(file("image_ids"), table.image_ids);
  write_tensor_npy(file("triplets"),
                   at::stack({triplets.first, triplets.second, triplets.third}, 1));
  if (table.factors.defined()) write_tensor_npy(file("factors"), table.factors);
  if (triplets.conditions.defined()) write_tensor_npy(file("conditions"), triplets.conditions);
  write_row_files(*pipeline.dataset, table, out / (name + "_files.json"));
  fmt::print("{}: {} images (φ {}-D, {} ψ of {}-D), {} triplets\n", name, table.items.size(),
             table.items.phi.size(1), table.items.psi.size(1), table.items.psi.size(2),
             triplets.size());
}

}  // namespace

EmbedCommand::EmbedCommand(CLI::App& app)
    : Command(app, "embed",
              "Export per-image embeddings (φ and every ψ_k) and labels as .npy files") {
  CLI::App& c = subcommand();
  c.add_option("target", target_, "Run directory or checkpoint file")->required();
  std::vector<std::string> split_names;
  for (Split split : kAllSplits)
    split_names.emplace_back(split_name(split));
  c.add_option("--split", splits_, "Split to export (repeatable; default: test)")
      ->check(CLI::IsMember(split_names));
  c.add_option("--output", output_, "Directory (default: <run>/embeddings)");
  c.add_option("--set", overrides_, "Override a pipeline key");
  nproc_.add_to(c);
}

int EmbedCommand::run(const Invocation& invocation) {
  if (nproc_.starts_processes(invocation.world)) return nproc_.launch(invocation);
  std::vector<Split> splits;
  for (const std::string& name : splits_) {
    Split split{};
    if (parse_split(name, split)) splits.push_back(split);
  }
  if (splits.empty()) splits = {Split::Test};
  const auto [run, checkpoint] = run_and_checkpoint(target_);
  RankJob job(invocation.global, invocation.world, JobWork::Embedding, run.resolved(), overrides_);
  Pipeline& pipeline = job.pipeline();
  check_splits_exist(*pipeline.dataset, splits);
  job.join();
  job.lock(run);
  const Strategy& strategy = job.strategy();
  return job.run([&] {
    model_from_root(pipeline, strategy, checkpoint);
    const fs::path out = output_.empty() ? run.root() / "embeddings" : output_;
    const DatasetInfo info = pipeline.dataset->info();
    if (strategy.is_root()) {
      std::error_code ec;
      fs::create_directories(out, ec);
      if (ec) throw Error(fmt::format("cannot create {}: {}", out.string(), ec.message()));
      std::string names;
      for (const std::string& name : info.condition_names())
        names += name + "\n";
      write_file_atomically(out / "conditions.txt", names);
    }
    std::map<Split, EmbeddingTable> tables;
    const auto table_of = [&](Split split) -> const EmbeddingTable& {
      auto it = tables.find(split);
      if (it == tables.end())
        it = tables
                 .emplace(split,
                          embed_split(pipeline, split, pipeline.trainer.eval_batch_size, strategy))
                 .first;
      return it->second;
    };
    for (Split split : splits) {
      const EmbeddingTable& table = table_of(split);
      if (strategy.is_root()) write_split(pipeline, table, std::string(split_name(split)), out);
    }
    EmbeddedAlignment alignment;
    const ConditionModule& module = *pipeline.condition_module;
    alignment.identity = module.supervision() == Supervision::Conditioned &&
                         module.num_embeddings() == info.num_conditions();
    if (!alignment.identity && has_alignment_evaluator(pipeline) && info.has_split(Split::Val) &&
        info.has_split(Split::Test)) {
      const EmbeddingTable& fit = table_of(Split::Val);
      const EmbeddingTable& target = table_of(Split::Test);
      if (strategy.is_root()) alignment.published = published_alignments(pipeline, fit, target);
    }
    if (strategy.is_root()) {
      write_file_atomically(out / "alignment.json",
                            alignment_json(pipeline, alignment).dump(2) + "\n");
      fmt::print("embeddings of {} written to {}\n", checkpoint.string(), out.string());
    }
    return 0;
  });
}

}  // namespace wscsl::host
