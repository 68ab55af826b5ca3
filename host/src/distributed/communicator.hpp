// The processes of a data-parallel job, joined through c10d: a TCPStore for the rendezvous (served
// by rank 0, or by torchrun's agent where it says so), Gloo for the collectives of CPU tensors and,
// where the model lives on a GPU, Gloo or NCCL for those of CUDA tensors. A one-process world has
// neither, and every collective is a no-op.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "pipeline/trainer_options.hpp"
#include "world.hpp"
#include "wscsl/error.hpp"

namespace wscsl::host {

// A failure of one process of a job, its message prefixed with the process's rank.
class RankError : public Error {
 public:
  RankError(int rank, const std::string& message);
};

// A collective that failed: a rank died, hung past the timeout or never joined.
class CollectiveError : public RankError {
 public:
  using RankError::RankError;
};

// How long a process of a job waits: for every rank to reach the rendezvous store (the first
// contact), then for the others in the set-up and in every collective.
struct JoinTimeouts {
  std::chrono::seconds rendezvous;
  std::chrono::seconds collective;
};

// Averages gradients over the ranks during backward, bucket by bucket as PyTorch's DDP does (it
// is DDP's own Reducer), so the all-reduce of one bucket overlaps the backward of the next. With
// several ranks each gradient is a view into its bucket after the first backward: zero gradients
// in place between steps (zero_gradients, training_step.hpp), never drop or detach them.
class GradientAverager {
 public:
  virtual ~GradientAverager() = default;
  // Call before backward of `loss`, once per step, on every rank (before the second backward the
  // ranks agree on the buckets' new order).
  virtual void prepare(const at::Tensor& loss) = 0;
};

class Communicator {
 public:
  // Joins `world`: a one-process world is single(), any other a group(). `device` is where this
  // process's model lives; NCCL needs it to be a GPU with an index.
  static std::unique_ptr<Communicator> join(const World& world, const JoinTimeouts& timeouts,
                                            CollectiveBackend backend, const at::Device& device);
  // Joins `world` through c10d whatever its size: every rank reaches the rendezvous store within
  // `timeouts.rendezvous` (else the process ends, rendezvous_store() says how), and the set-up,
  // the collectives and a silent peer give up after `timeouts.collective`. Throws Error with one
  // sentence when the port is taken, not every rank joins in time, or NCCL is asked for where it
  // cannot run.
  static std::unique_ptr<Communicator> group(const World& world, const JoinTimeouts& timeouts,
                                             CollectiveBackend backend, const at::Device& device);
  // The world of one process.
  static std::unique_ptr<Communicator> single();
  virtual ~Communicator() = default;

  const World& world() const { return world_; }
  int rank() const { return world_.rank; }
  int size() const { return world_.size; }
  bool is_root() const { return world_.rank == 0; }

  // Overwrites `tensors` with rank 0's (every rank passes the same list).
  virtual void broadcast(std::vector<at::Tensor> tensors) const = 0;
  // Sums `tensor` over the ranks, in place.
  virtual void sum(at::Tensor& tensor) const = 0;
  // Starts summing `tensor` in place and returns at once; the returned function waits for the
  // sum (so that it overlaps with what runs in between).
  virtual std::function<void()> start_sum(at::Tensor& tensor) const = 0;
  // Every rank's `rows` (the same shape but for the first dimension, which may differ by rank)
  // concatenated in rank order, on every rank.
  virtual at::Tensor gather_rows(const at::Tensor& rows) const = 0;
  // Averages the gradients of `parameters` (the same list, in the same order, on every rank).
  virtual std::unique_ptr<GradientAverager> gradient_averager(
      const std::vector<at::Tensor>& parameters, const std::vector<std::string>& names) const = 0;

 protected:
  explicit Communicator(World world) : world_(std::move(world)) {}

 private:
  World world_;
};

}  // namespace wscsl::host
