// The [trainer] table: the host-owned settings of the training loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "parameter_groups.hpp"
#include "wscsl/config/schema.hpp"

namespace wscsl::host {

enum class OptimizerKind { Adam, Sgd };
enum class LrSchedule { Constant, Step, Exponential };
enum class SelectMode { Max, Min };
enum class DeviceKind { Auto, Cpu, Cuda };
// trainer.collective_backend: how CUDA tensors are reduced (CollectiveBackend once resolved).
enum class CollectiveBackendSetting { Auto, Gloo, Nccl };
// The c10d backend of the collectives of CUDA tensors (CPU tensors always go through Gloo).
enum class CollectiveBackend {
  Gloo,  // through host memory
  Nccl,  // GPU to GPU; needs a CUDA device and a build with NCCL
};
// Whether this wscsl was built with c10d's NCCL backend: a CUDA LibTorch 2 and NCCL's headers
// (host/CMakeLists.txt; distributed/nccl.cpp or nccl_absent.cpp defines it).
bool nccl_built_in();
// trainer.precision: float32 throughout, or the training forward under bfloat16 autocast.
enum class Precision { Float32, Bf16Mixed };

// trainer.device: "auto", "cpu", "cuda" or "cuda:N".
struct DeviceSetting {
  DeviceKind kind = DeviceKind::Auto;
  std::int64_t index = -1;  // N of "cuda:N"; -1 otherwise ("cuda": LibTorch's current GPU)
};

struct TrainerOptions {
  std::int64_t epochs = 5;
  std::int64_t batch_size = 64;
  bool drop_last = false;
  bool read_ahead = true;
  OptimizerKind optimizer = OptimizerKind::Adam;
  double lr = 1e-3;
  double momentum = 0.9;
  double weight_decay = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  LrSchedule lr_schedule = LrSchedule::Constant;
  std::int64_t step_size = 30;
  double gamma = 0.1;
  std::int64_t seed = 1;
  std::int64_t threads = 0;
  bool validate = true;
  std::string select_metric;
  SelectMode select_mode = SelectMode::Max;
  std::int64_t checkpoint_every = 0;
  std::int64_t keep_last = 2;
  std::int64_t rendezvous_timeout_s = 30;
  std::int64_t collective_timeout_s = 300;
  CollectiveBackendSetting collective_backend = CollectiveBackendSetting::Auto;
  bool sync_batch_norm = false;
  Precision precision = Precision::Float32;
  std::int64_t log_every = 100;
  bool tensorboard = true;
  std::int64_t eval_batch_size = 1024;
  bool evaluate_after = true;
  DeviceSetting device;
  // [[trainer.parameter_groups]], bound beside the schema (bind_parameter_groups): the parameters
  // of no group train at `lr`.
  std::vector<ParameterGroup> parameter_groups;

  static Schema<TrainerOptions> schema();
  // Binds the [trainer] table `table`: the schema's keys and [[trainer.parameter_groups]].
  static TrainerOptions bind(const ConfigNode& table, BindScope& scope);
  // The [trainer] table as `wscsl describe trainer` documents it: the schema's fields, then
  // `parameter_groups` and the keys of each of its tables ("parameter_groups[].lr").
  static SchemaDescription description();
  // What keeps `batch_size` (≥ 1 by the schema) from being shared equally by `processes` or from
  // fitting a training split of `train_triplets`, where that is known; empty when nothing does.
  std::string batch_size_problem(std::optional<std::int64_t> train_triplets,
                                 int processes = 1) const;
  // The learning rate of epoch `epoch` (0-based) under the schedule.
  double lr_at(std::int64_t epoch) const { return lr_at(epoch, lr); }
  // The learning rate of epoch `epoch` of parameters whose initial rate is `initial`.
  double lr_at(std::int64_t epoch, double initial) const;
  // Whether `value` is better than `best` under select_mode (anything beats NaN).
  bool improves(double value, double best) const;
};

// Whether the model trains on a GPU where `device` says: "cuda" and "cuda:N", and "auto" when
// LibTorch has CUDA and a GPU is visible. (place() resolves the device itself.)
bool trains_on_gpu(const DeviceSetting& device);

// Seeds LibTorch with `seed`: parameters are initialised while the components are built, so this
// comes first. (The thread count is the placement's: use_threads, distributed/placement.hpp.)
void apply_determinism(const TrainerOptions& options);

// Sets the [trainer] device of the pipeline tree `root` to `device`, for a command that computes
// there whatever the file names (export-weights copies tensors on the CPU, so that a run trained
// on a GPU opens on any machine). `why` says which command, for messages.
void set_trainer_device(ConfigNode& root, const DeviceSetting& device, const std::string& why);

}  // namespace wscsl::host
