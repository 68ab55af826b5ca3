#include "communicator.hpp"

#include <ATen/ATen.h>

#include <map>

#include <fmt/format.h>

#include "c10d_compat.hpp"
#include "nccl.hpp"
#include "rendezvous.hpp"

namespace wscsl::host {
namespace {

class NoAveraging : public GradientAverager {
 public:
  void prepare(const at::Tensor&) override {}
};

class SingleProcess : public Communicator {
 public:
  SingleProcess() : Communicator(World{}) {}
  void broadcast(std::vector<at::Tensor>) const override {}
  void sum(at::Tensor&) const override {}
  std::function<void()> start_sum(at::Tensor&) const override {
    return [] {};
  }
  at::Tensor gather_rows(const at::Tensor& rows) const override { return rows; }
  std::unique_ptr<GradientAverager> gradient_averager(
      const std::vector<at::Tensor>&, const std::vector<std::string>&) const override {
    return std::make_unique<NoAveraging>();
  }
};

// DDP's bucketing engine: hooks on each parameter's gradient accumulator launch the all-reduce
// of a bucket as soon as its gradients are ready, and backward returns averaged gradients. The
// gradients are views into the buckets, and the buckets are laid out again once, before the second
// backward, in the order the first one's gradients became ready (rank 0's order, which the
// Reducer broadcasts), as PyTorch's DDP does before its second forward.
class ReducerAverager : public GradientAverager {
 public:
  ReducerAverager(const std::vector<at::Tensor>& parameters, const std::vector<std::string>& names,
                  const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
    auto [buckets, limits] = c10d::compute_bucket_assignment_by_size(
        parameters,
        {static_cast<std::size_t>(c10d::kDefaultFirstBucketBytes),
         static_cast<std::size_t>(c10d::kDefaultBucketBytesCap)},
        std::vector<bool>(parameters.size(), false));
    // Until the rebuild, gradients are assumed ready in reverse order of the parameters, as DDP
    // assumes too.
    std::reverse(buckets.begin(), buckets.end());
    std::reverse(limits.begin(), limits.end());
    std::unordered_map<std::size_t, std::string> indexed_names;
    for (std::size_t i = 0; i < names.size(); ++i)
      indexed_names[i] = names[i];
    reducer_ = c10d_compat::make_reducer(parameters, std::move(buckets), std::move(limits), group,
                                         std::move(indexed_names));
  }

  void prepare(const at::Tensor& loss) override {
    try {
      reducer_->rebuild_buckets();  // does nothing but once, after the first backward
      reducer_->prepare_for_backward({loss});
    } catch (const std::exception& e) {
      throw Error(fmt::format(
          "data-parallel training needs every trainable parameter to receive a gradient in "
          "every step ({})",
          reason_of(e)));
    }
  }

 private:
  std::unique_ptr<c10d::Reducer> reducer_;
};

class C10dCommunicator : public Communicator {
 public:
  C10dCommunicator(const World& world, const JoinTimeouts& timeouts, CollectiveBackend backend,
                   const at::Device& device)
      : Communicator(world) {
    const std::chrono::seconds timeout = timeouts.collective;
    if (backend == CollectiveBackend::Nccl && !(device.is_cuda() && device.has_index()))
      throw RankError(world.rank,
                      fmt::format("NCCL reduces tensors on a GPU, and this process's model "
                                  "is on {} (set trainer.device to \"cuda\" or \"cuda:N\")",
                                  device.str()));
    store_ = rendezvous_store(world, timeouts);
    const std::string master = fmt::format("{}:{}", world.master_address, world.master_port);
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
    gloo_options->devices.push_back(gloo_device(world));
    // One worker thread: on a machine whose cores all train, more only add wake-ups (measured:
    // 2 threads take 6× as long to all-reduce 400 kB on loopback as 1).
    gloo_options->threads = 1;
    c10d_compat::Backend nccl;
    if (backend == CollectiveBackend::Nccl) {
      try {
        nccl = nccl::make_backend(store_, world.rank, world.size, device.index(), timeout);
      } catch (const c10::Error& e) {
        throw RankError(world.rank, fmt::format("NCCL could not be set up on {}: {}", device.str(),
                                                reason_of(e)));
      }
    }
    try {
      auto gloo =
          c10::make_intrusive<c10d::ProcessGroupGloo>(store_, world.rank, world.size, gloo_options);
      group_ = c10d_compat::process_group(store_, world.rank, world.size, std::move(gloo),
                                          std::move(nccl), timeout);
    } catch (const std::exception& e) {
      throw not_all_joined(world, master, timeout, reason_of(e));
    }
  }

  void broadcast(std::vector<at::Tensor> tensors) const override {
    // One flat buffer per dtype: one collective instead of one per tensor.
    std::map<at::ScalarType, std::vector<at::Tensor>> by_type;
    for (const at::Tensor& t : tensors)
      by_type[t.scalar_type()].push_back(t);
    at::NoGradGuard no_grad;
    for (auto& [type, group] : by_type) {
      (void)type;
      std::vector<at::Tensor> flat{at::cat(flattened(group))};
      wait(group_->broadcast(flat), "broadcast");
      std::int64_t offset = 0;
      for (at::Tensor& t : group) {
        t.copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
        offset += t.numel();
      }
    }
  }

  void sum(at::Tensor& tensor) const override { start_sum(tensor)(); }

  std::function<void()> start_sum(at::Tensor& tensor) const override {
    std::vector<at::Tensor> list{tensor};
    auto work = group_->allreduce(list);
    return [this, work] { wait(work, "all-reduce"); };
  }

  at::Tensor gather_rows(const at::Tensor& rows) const override {
    at::Tensor count = at::full({1}, rows.size(0), at::kLong);
    const std::vector<at::Tensor> counts = all_gather(count);
    std::int64_t most = 0;
    for (const at::Tensor& c : counts)
      most = std::max(most, c.item<std::int64_t>());
    std::vector<std::int64_t> padded_shape = rows.sizes().vec();
    padded_shape[0] = most;
    at::Tensor padded = at::zeros(padded_shape, rows.options());
    padded.narrow(0, 0, rows.size(0)).copy_(rows);
    std::vector<at::Tensor> parts = all_gather(padded);
    for (std::size_t r = 0; r < parts.size(); ++r)
      parts[r] = parts[r].narrow(0, 0, counts[r].item<std::int64_t>());
    return at::cat(parts);
  }

  std::unique_ptr<GradientAverager> gradient_averager(
      const std::vector<at::Tensor>& parameters,
      const std::vector<std::string>& names) const override {
    return std::make_unique<ReducerAverager>(parameters, names, group_);
  }

 private:
  static std::vector<at::Tensor> flattened(const std::vector<at::Tensor>& tensors) {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& t : tensors)
      flat.push_back(t.detach().reshape({-1}));
    return flat;
  }

  std::vector<at::Tensor> all_gather(const at::Tensor& tensor) const {
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < size(); ++r)
      outputs[0].push_back(at::empty_like(tensor));
    std::vector<at::Tensor> input{tensor.contiguous()};
    wait(group_->allgather(outputs, input), "all-gather");
    return outputs[0];
  }

  void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) const {
    try {
      work->wait();
    } catch (const std::exception& e) {
      throw CollectiveError(rank(), fmt::format("the {} failed ({})", what, reason_of(e)));
    }
  }

  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
};

}  // namespace

RankError::RankError(int rank, const std::string& message)
    : Error(fmt::format("rank {}: {}", rank, message)) {}

std::unique_ptr<Communicator> Communicator::join(const World& world, const JoinTimeouts& timeouts,
                                                 CollectiveBackend backend,
                                                 const at::Device& device) {
  if (world.size == 1) return single();
  return group(world, timeouts, backend, device);
}

std::unique_ptr<Communicator> Communicator::group(const World& world, const JoinTimeouts& timeouts,
                                                  CollectiveBackend backend,
                                                  const at::Device& device) {
  return std::make_unique<C10dCommunicator>(world, timeouts, backend, device);
}

std::unique_ptr<Communicator> Communicator::single() {
  return std::make_unique<SingleProcess>();
}

}  // namespace wscsl::host
