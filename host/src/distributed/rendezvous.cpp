#include "rendezvous.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <c10/util/Exception.h>

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "wscsl/util/text.hpp"

namespace wscsl::host {
namespace {

bool is_loopback(const std::string& address) {
  return address == "localhost" || starts_with(address, "127.") || address == "::1";
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

}  // namespace

std::string reason_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

RankError not_all_joined(const World& world, const std::string& master,
                         std::chrono::seconds timeout, const std::string& reason) {
  return RankError(world.rank,
                   fmt::format("not all {} ranks of {} joined the rendezvous on {} within "
                               "{} s (is WORLD_SIZE right, and did every rank start?): {}",
                               world.size, job_of(world), master, timeout.count(), reason));
}

std::shared_ptr<::gloo::transport::Device> gloo_device(const World& world) {
  if (is_loopback(world.master_address))
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"))
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

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

}  // namespace wscsl::host
