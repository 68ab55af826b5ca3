// A trained run opened to embed and compare images it has never seen: its pipeline with the
// weights of the checkpoint `wscsl eval` uses, placed by its own one-process Strategy (the run's
// device and threads), and the run's way of turning an image file into the model's input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "distributed/strategy.hpp"
#include "index_format.hpp"
#include "pipeline/session.hpp"
#include "run/run_directory.hpp"

namespace wscsl::host::search {

struct RunModel {
  RunDirectory run{""};
  std::filesystem::path checkpoint;
  std::string checkpoint_sha256;  // of the checkpoint's archive
  OpenPipeline opened;
  std::unique_ptr<Strategy> strategy;  // one process, placed as the run's [trainer] says
  // How the run's dataset makes model input of an image (DatasetInfo::images).
  ImagePreparation images;

  Pipeline& pipeline() { return opened.pipeline; }
  torch::Device device() const { return strategy->device(); }
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

// Refuses, naming the dataset and `files` (what was asked for), a run whose dataset declares no
// way to prepare an image file (FilePreparation::None: it generates its images).
void require_file_preparation(const RunModel& model, const std::string& files);

// One image file as uint8 [1, 3, S, S], prepared as the dataset declares (as the store prepares
// images). Throws DataError calling the file `named` (its path, or what it stands for, as "the
// dropped image" for an upload written to a temporary file) when it is a folder, is not a JPEG or
// PNG, is damaged, or announces more than the dataset's max_image_pixels pixels (checked in its
// header before anything is decoded), and naming the dataset when it prepares no image files.
torch::Tensor read_query_pixels(const RunModel& model, const std::filesystem::path& file,
                                const std::string& named);

// An image file as read_query_pixels prepares it, for a picture: float [3, S, S] in [0, 1].
torch::Tensor file_picture(const RunModel& model, const std::filesystem::path& file);

// φ, ψ and every text encoder's features of `pixels` (uint8 [B, 3, S, S]), in eval mode without
// gradients, on the CPU. Images from files have no text: each text encoder sees "" (no text).
ItemFeatures embed_pixels(RunModel& model, const torch::Tensor& pixels);

// Whether the run's condition module provides attention maps (Resource::AttentionMaps).
bool has_attention_maps(const RunModel& model);
// Where the run's condition module looks in each image of `input` (model input [B, 3, S, S], as
// model_input makes it): ConditionModule::attention_maps, [B, K, h, w] on the CPU, each map
// summing to 1; an undefined tensor for a module without them (has_attention_maps).
torch::Tensor attention_maps(RunModel& model, const torch::Tensor& input);

// The conditions an index of this run ranks by (docs/search.md): the dataset's conditions through
// the run's condition ↔ embedding alignment (the pipeline's alignment evaluator fitted on the
// validation split, the OT plan; a supervised module with one embedding per condition: the
// identity), else one per embedding, "psi1".."psiK"; plus "fused", the module's own pair score,
// for a weakly supervised module that scores pairs. `alignment` is set to where the alignment
// came from.
std::vector<IndexedCondition> indexed_conditions(RunModel& model, std::string& alignment);

}  // namespace wscsl::host::search
