#include "run_model.hpp"

#include <torch/utils.h>

#include <fmt/format.h>

#include "distributed/placement.hpp"
#include "evaluation/evaluation.hpp"
#include "evaluation/run_evaluation.hpp"
#include "pipeline/item_forward.hpp"
#include "wscsl/data/image_dataset.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/error.hpp"
#include "wscsl/eval/aligned.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/checkpoint_manifest.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

const ConfigNode* dataset_option(const Pipeline& pipeline, const char* key) {
  const ConfigNode* dataset = pipeline.resolved.find("dataset");
  return dataset ? dataset->find(key) : nullptr;
}

PixelPreparation pixel_preparation(const Pipeline& pipeline) {
  const DatasetInfo info = pipeline.dataset->info();
  if (info.channels != 3 || info.height != info.width || info.height < 1)
    throw Error(
        fmt::format("{} gives {}×{}×{} images; `wscsl index` prepares square RGB images "
                    "only",
                    pipeline.dataset->label(), info.channels, info.height, info.width));
  PixelPreparation p;
  p.image_size = info.height;
  const ConfigNode* normalize = dataset_option(pipeline, "normalize");
  p.imagenet = normalize && normalize->is_string() && normalize->as_string() == "imagenet";
  const ConfigNode* max_pixels = dataset_option(pipeline, "max_image_pixels");
  p.max_image_pixels =
      max_pixels && max_pixels->is_integer() ? max_pixels->as_integer() : kDefaultMaxImagePixels;
  const ConfigNode* cache = dataset_option(pipeline, "cache_dir");
  if (cache && cache->is_string()) p.cache_dir = cache->as_string();
  const ConfigNode* limit = dataset_option(pipeline, "cache_limit_mb");
  p.cache_limit_bytes =
      (limit && limit->is_integer() ? limit->as_integer() : ImageDatasetOptions{}.cache_limit_mb)
      << 20;
  return p;
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
  const Placement placement = place(pipeline.trainer, World{});
  use_threads(placement);
  model->device = placement.device;
  model->pixels = pixel_preparation(pipeline);
  model_from_root(pipeline, model->device, model->checkpoint, *Communicator::single());
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
  torch::Tensor x = pixels.to(torch::kFloat).div_(255);
  if (model.pixels.imagenet) x.sub_(imagenet_mean()).div_(imagenet_std());
  return x.to(model.device);
}

torch::Tensor read_query_pixels(const RunModel& model, const fs::path& file,
                                const std::string& named) {
  std::error_code ec;
  if (fs::is_directory(file, ec))
    throw DataError(
        fmt::format("{} is a folder; a query is one JPEG or PNG image file (the images of a "
                    "folder are searched once indexed: `wscsl index RUN --images {}`)",
                    named, file.string()));
  const DecodedImage decoded = read_image_file(file, model.pixels.max_image_pixels);
  if (!decoded.problem.empty())
    throw DataError(fmt::format("{}: {}; expected a JPEG or PNG image", named, decoded.problem));
  const std::int64_t size = model.pixels.image_size;
  torch::Tensor pixels = torch::empty({1, 3, size, size}, torch::kUInt8);
  resize_and_center_crop(decoded.image, static_cast<int>(size), pixels.data_ptr<std::uint8_t>());
  return pixels;
}

ItemFeatures embed_pixels(RunModel& model, const torch::Tensor& pixels) {
  torch::NoGradGuard no_grad;
  const Pipeline& pipeline = model.pipeline();
  ItemInputs inputs{model_input(model, pixels), {}};
  for (const NamedTextEncoder& t : pipeline.text_encoders)
    inputs.texts[t.field].assign(static_cast<std::size_t>(pixels.size(0)), "");
  return forward_items(pipeline, {inputs}, pipeline_embedders(pipeline)).to(torch::kCPU);
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
    const EmbeddingTable val = embed_split(pipeline, Split::Val, pipeline.trainer.eval_batch_size);
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
