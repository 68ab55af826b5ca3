// A trained run opened to embed and compare images it has never seen: its pipeline with the
// weights of the checkpoint `wscsl eval` uses, on the run's device, and the run's way of turning
// an image file into the model's input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "index_format.hpp"
#include "pipeline/session.hpp"
#include "run/run_directory.hpp"

namespace wscsl::host::search {

// How the run's dataset makes model input of an image file: decoded, resized and centre-cropped
// to `image_size` (as every image dataset does), then x/255, then ImageNet's normalisation where
// the dataset's `normalize` option says "imagenet" (a dataset without that option, such as
// Fashion-CRB, feeds x/255).
struct PixelPreparation {
  std::int64_t image_size = 0;
  bool imagenet = false;
  std::int64_t max_image_pixels = 0;   // the dataset's max_image_pixels, else PIL's bomb limit
  std::filesystem::path cache_dir;     // the dataset's cache_dir (empty: the default folder)
  std::int64_t cache_limit_bytes = 0;  // the dataset's cache_limit_mb, else its default
};

struct RunModel {
  RunDirectory run{""};
  std::filesystem::path checkpoint;
  std::string checkpoint_sha256;  // of the checkpoint's archive
  OpenPipeline opened;
  torch::Device device{torch::kCPU};
  PixelPreparation pixels;

  Pipeline& pipeline() { return opened.pipeline; }
};

// Opens `run` (a run directory) with the checkpoint checkpoint_for_evaluation picks. Throws Error
// naming what is missing or damaged.
std::unique_ptr<RunModel> open_run_model(const GlobalOptions& global,
                                         const std::filesystem::path& run);

// The SHA-256 of a checkpoint's archive, from its verified manifest.
std::string checkpoint_sha256(const std::filesystem::path& checkpoint);

// Refuses, with a sentence naming both, an index made from another checkpoint than `model`'s.
void require_same_run(const IndexManifest& manifest, const RunModel& model,
                      const std::filesystem::path& index);

// Model input [B, 3, S, S] on the model's device of decoded images [B, 3, S, S] uint8.
torch::Tensor model_input(const RunModel& model, const torch::Tensor& pixels);

// One image file as uint8 [1, 3, S, S], prepared as the store prepares images. Throws DataError
// calling the file `named` (its path, or what it stands for, as "the dropped image" for an upload
// written to a temporary file) when it is a folder, is not a JPEG or PNG, is damaged, or announces
// more than max_image_pixels pixels (checked in its header before anything is decoded).
torch::Tensor read_query_pixels(const RunModel& model, const std::filesystem::path& file,
                                const std::string& named);

// φ, ψ and every text encoder's features of `pixels` (uint8 [B, 3, S, S]), in eval mode without
// gradients, on the CPU. Images from files have no text: each text encoder sees "" (no text).
ItemFeatures embed_pixels(RunModel& model, const torch::Tensor& pixels);

// The conditions an index of this run ranks by (docs/search.md): the dataset's conditions through
// the run's condition ↔ embedding alignment (the pipeline's alignment evaluator fitted on the
// validation split, the OT plan; a supervised module with one embedding per condition: the
// identity), else one per embedding, "psi1".."psiK"; plus "fused", the module's own pair score,
// for a weakly supervised module that scores pairs. `alignment` is set to where the alignment
// came from.
std::vector<IndexedCondition> indexed_conditions(RunModel& model, std::string& alignment);

}  // namespace wscsl::host::search
