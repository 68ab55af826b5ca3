#include "communicator.hpp"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "c10d_compat.hpp"
#include "nccl.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::host {
namespace {

std::string reason_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

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
// of a bucket as soon as its gradients are ready, and backward returns averaged gradients.
class ReducerAverager : public GradientAverager {
 public:
  ReducerAverager(const std::vector<at::Tensor>& parameters, const std::vector<std::string>& names,
                  const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
    auto [buckets, limits] = c10d::compute_bucket_assignment_by_size(
        parameters,
        {static_cast<std::size_t>(c10d::kDefaultFirstBucketBytes),
         static_cast<std::size_t>(c10d::kDefaultBucketBytesCap)},
        std::vector<bool>(parameters.size(), false));
    // Gradients become ready roughly in reverse order of the parameters, as DDP assumes too.
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

bool is_loopback(const std::string& address) {
  return address == "localhost" || starts_with(address, "127.") || address == "::1";
}

std::shared_ptr<::gloo::transport::Device> gloo_device(const World& world) {
  if (is_loopback(world.master_address))
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"))
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// The job `world` belongs to, as messages name it.
std::string job_of(const World& world) {
  switch (world.launcher) {
    case Launcher::Torchrun:
      return "the torchrun job";
    case Launcher::Slurm:
      return "the srun step";
    case Launcher::Nproc:
      return "the --nproc job";
    case Launcher::Environment:
    case Launcher::None:
      break;
  }
  return fmt::format("WORLD_SIZE={}", world.size);
}

RankError not_all_joined(const World& world, const std::string& master,
                         std::chrono::seconds timeout, const std::string& reason) {
  return RankError(world.rank,
                   fmt::format("not all {} ranks of {} joined the rendezvous on {} within "
                               "{} s (is WORLD_SIZE right, and did every rank start?): {}",
                               world.size, job_of(world), master, timeout.count(), reason));
}

// Whether another socket holds TCP port `port` of this machine, as a server bound to it would
// find: what a failure to serve the rendezvous there means.
bool port_taken(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(port);
  const bool taken =
      ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return taken;
}

// The rendezvous store of `world`: served by rank 0 unless torchrun's agent serves one, which every
// rank then joins, keeping the keys of each restart of the job apart as PyTorch's env:// does.
c10::intrusive_ptr<c10d::Store> rendezvous_store(const World& world, std::chrono::seconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = world.master_port;
  const bool serving = !world.agent_store && world.rank == 0;
  options.isServer = serving;
  options.numWorkers = static_cast<std::size_t>(world.size);
  options.waitWorkers = true;
  options.timeout = timeout;
  c10d_compat::serve_without_libuv(options, 0);
  const std::string master = fmt::format("{}:{}", world.master_address, world.master_port);
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(world.master_address, options);
  } catch (const std::exception& e) {
    const std::string reason = reason_of(e);
    if (serving && port_taken(world.master_port))
      throw Error(
          fmt::format("rank 0 cannot serve the rendezvous on {}: the port is already in "
                      "use (choose another MASTER_PORT)",
                      master));
    if (serving) throw not_all_joined(world, master, timeout, reason);
    if (world.agent_store)
      throw RankError(
          world.rank,
          fmt::format("could not reach the store of torchrun's agent on {} within {} s "
                      "(MASTER_ADDR, MASTER_PORT; is the agent of the first node running?): {}",
                      master, timeout.count(), reason));
    throw RankError(world.rank, fmt::format("could not reach the rendezvous on {} within {} s "
                                            "(MASTER_ADDR, MASTER_PORT; is rank 0 running?): {}",
                                            master, timeout.count(), reason));
  }
  if (!world.agent_store) return store;
  return c10::make_intrusive<c10d::PrefixStore>(fmt::format("/worker/attempt_{}", world.restart),
                                                store);
}

class C10dCommunicator : public Communicator {
 public:
  C10dCommunicator(const World& world, std::chrono::seconds timeout, CollectiveBackend backend,
                   const at::Device& device)
      : Communicator(world) {
    if (backend == CollectiveBackend::Nccl && !(device.is_cuda() && device.has_index()))
      throw RankError(world.rank,
                      fmt::format("NCCL reduces tensors on a GPU, and this process's model "
                                  "is on {} (set trainer.device to \"cuda\" or \"cuda:N\")",
                                  device.str()));
    store_ = rendezvous_store(world, timeout);
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

std::unique_ptr<Communicator> Communicator::join(const World& world, std::chrono::seconds timeout,
                                                 CollectiveBackend backend,
                                                 const at::Device& device) {
  if (world.size == 1) return single();
  return group(world, timeout, backend, device);
}

std::unique_ptr<Communicator> Communicator::group(const World& world, std::chrono::seconds timeout,
                                                  CollectiveBackend backend,
                                                  const at::Device& device) {
  return std::make_unique<C10dCommunicator>(world, timeout, backend, device);
}

std::unique_ptr<Communicator> Communicator::single() {
  return std::make_unique<SingleProcess>();
}

}  // namespace wscsl::host
