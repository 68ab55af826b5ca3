#include "run_model.hpp"

#include <torch/utils.h>

#include <fmt/format.h>

#include "evaluation/evaluation.hpp"
#include "evaluation/run_evaluation.hpp"
#include "pipeline/item_forward.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/error.hpp"
#include "wscsl/eval/aligned.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

ImagePreparation image_preparation(const Pipeline& pipeline) {
  const DatasetInfo info = pipeline.dataset->info();
  if (info.channels != 3 || info.height != info.width || info.height < 1)
    throw Error(
        fmt::format("{} gives {}×{}×{} images; `wscsl index` prepares square RGB images "
                    "only",
                    pipeline.dataset->label(), info.channels, info.height, info.width));
  return info.images;
}

}  // namespace

std::string checkpoint_sha256(const fs::path& checkpoint) {
  return open_sealed_checkpoint(read_file(checkpoint), checkpoint).manifest.archive_sha256;
}

std::unique_ptr<RunModel> open_run_model(const GlobalOptions& global, const fs::path& run) {
  auto model = std::make_unique<RunModel>();
  model->run = RunDirectory::open(run);
  model->checkpoint = checkpoint_for_evaluation(model->run);
  model->checkpoint_sha256 = checkpoint_sha256(model->checkpoint);
  model->opened = open_pipeline(global, model->run.resolved(), {});
  Pipeline& pipeline = model->pipeline();
  model->strategy = std::make_unique<Strategy>(pipeline.trainer, World{});
  model->images = image_preparation(pipeline);
  model_from_root(pipeline, *model->strategy, model->checkpoint);
  pipeline.model()->eval();
  return model;
}

void require_same_run(const IndexManifest& manifest, const RunModel& model, const fs::path& index) {
  if (manifest.checkpoint_sha256 == model.checkpoint_sha256) return;
  throw DataError(fmt::format(
      "{} was made from {} (checkpoint SHA-256 {}), not from {} of {} (SHA-256 {}); an index "
      "is searched and extended only with the weights it was made with: index the images of this "
      "run into another folder",
      index.string(), manifest.checkpoint, manifest.checkpoint_sha256.substr(0, 12),
      model.checkpoint.string(), model.run.root().string(), model.checkpoint_sha256.substr(0, 12)));
}

torch::Tensor model_input(const RunModel& model, const torch::Tensor& pixels) {
  return wscsl::model_input(model.images, pixels).to(model.device());
}

void require_file_preparation(const RunModel& model, const std::string& files) {
  switch (model.images.files) {
    case FilePreparation::ResizeCenterCrop:
      return;
    case FilePreparation::None:
      break;
  }
  throw DataError(fmt::format(
      "{} of {} generates its images and declares no way to prepare an image file, so {} cannot "
      "be made model input as its images are; index and search its own images instead "
      "(`wscsl index {} --split test`)",
      model.opened.pipeline.dataset->label(), model.run.root().string(), files,
      model.run.root().string()));
}

torch::Tensor read_query_pixels(const RunModel& model, const fs::path& file,
                                const std::string& named) {
  require_file_preparation(model, named);
  std::error_code ec;
  if (fs::is_directory(file, ec))
    throw DataError(
        fmt::format("{} is a folder; a query is one JPEG or PNG image file (the images of a "
                    "folder are searched once indexed: `wscsl index RUN --images {}`)",
                    named, file.string()));
  const DecodedImage decoded = read_image_file(file, model.images.max_image_pixels);
  if (!decoded.problem.empty())
    throw DataError(fmt::format("{}: {}; expected a JPEG or PNG image", named, decoded.problem));
  const std::int64_t size = model.images.size;
  torch::Tensor pixels = torch::empty({1, 3, size, size}, torch::kUInt8);
  resize_and_center_crop(decoded.image, static_cast<int>(size), pixels.data_ptr<std::uint8_t>());
  return pixels;
}

torch::Tensor file_picture(const RunModel& model, const fs::path& file) {
  return read_query_pixels(model, file, file.string())[0].to(torch::kFloat).div_(255);
}

ItemFeatures embed_pixels(RunModel& model, const torch::Tensor& pixels) {
  torch::NoGradGuard no_grad;
  const Pipeline& pipeline = model.pipeline();
  ItemInputs inputs{model_input(model, pixels), {}};
  for (const NamedTextEncoder& t : pipeline.text_encoders)
    inputs.texts[t.field].assign(static_cast<std::size_t>(pixels.size(0)), "");
  return forward_items(pipeline, {inputs}, pipeline_embedders(pipeline)).to(torch::kCPU);
}

bool has_attention_maps(const RunModel& model) {
  return model.opened.pipeline.condition_module->contract().provides_resource(
      Resource::AttentionMaps, "");
}

torch::Tensor attention_maps(RunModel& model, const torch::Tensor& input) {
  if (!has_attention_maps(model)) return {};
  const Pipeline& pipeline = model.pipeline();
  torch::NoGradGuard no_grad;
  return pipeline.condition_module
      ->attention_maps(
          embed_input(pipeline, input.to(model.device()), pipeline_embedders(pipeline)))
      .to(torch::kCPU);
}

std::vector<IndexedCondition> indexed_conditions(RunModel& model, std::string& alignment) {
  Pipeline& pipeline = model.pipeline();
  ConditionModule& module = *pipeline.condition_module;
  const DatasetInfo info = pipeline.dataset->info();
  const std::int64_t embeddings = module.num_embeddings();
  const bool conditioned = module.supervision() == Supervision::Conditioned;
  const bool pair_scores = module.contract().provides_resource(Resource::PairScores, "");
  const std::string ot = aligned::spelling(aligned::Strategy::Ot);
  std::vector<IndexedCondition> out;
  if (conditioned) {
    // A conditioned module is told the condition; its ψ_k for condition k where it has one
    // embedding per condition, else every ψ draws the candidates.
    const bool one_each = embeddings == info.num_conditions();
    for (std::int64_t c = 0; c < info.num_conditions(); ++c)
      out.push_back({info.conditions[static_cast<std::size_t>(c)].name,
                     pair_scores ? Comparison::PairScores : Comparison::Distances,
                     one_each ? c : -1, c});
    alignment =
        one_each ? "identity (supervised module)" : "none (the module is given the condition)";
    return out;
  }
  bool fits_ot = false;
  for (const NamedEvaluator& e : pipeline.evaluators)
    fits_ot = fits_ot || e.evaluator->contract().provides_resource(Resource::Alignment, ot);
  if (fits_ot && info.has_split(Split::Val)) {
    // The alignment is fitted on the validation split alone (the OT plan of the fit split).
    const EmbeddingTable val =
        embed_split(pipeline, Split::Val, pipeline.trainer.eval_batch_size, *model.strategy);
    std::map<std::string, torch::Tensor> shared = published_alignments(pipeline, val, val);
    const EvalContext context{val,
                              val,
                              module,
                              *pipeline.dataset,
                              info,
                              {},
                              shared,
                              false,
                              pipeline.trainer.eval_batch_size};
    const aligned::AlignedEmbeddings a =
        aligned::aligned_embeddings(context, aligned::Strategy::Ot, "wscsl index");
    for (std::size_t c = 0; c < info.conditions.size(); ++c)
      out.push_back(
          {info.conditions[c].name, Comparison::Distances, a.embedding_of_condition[c], -1});
    alignment = a.source + ", fitted on the validation split";
  } else {
    for (std::int64_t k = 0; k < embeddings; ++k)
      out.push_back({fmt::format("psi{}", k + 1), Comparison::Distances, k, -1});
    alignment = "none (the pipeline has no alignment evaluator): one condition per embedding";
  }
  if (pair_scores) out.push_back({"fused", Comparison::PairScores, -1, -1});
  return out;
}

}  // namespace wscsl::host::search
