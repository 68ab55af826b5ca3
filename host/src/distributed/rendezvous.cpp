#include "rendezvous.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "launchers.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::host {
namespace {

bool is_loopback(const std::string& address) {
  return address == "localhost" || starts_with(address, "127.") || address == "::1";
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

// Why the ranks of `world` did not all reach its store on `master` within `timeout`.
std::string first_contact_failure(const World& world, const std::string& master,
                                  std::chrono::seconds timeout, const std::string& reason) {
  return fmt::format(
      "not all {} ranks of {} reached the rendezvous store on {} ({}) within {} s "
      "(trainer.rendezvous_timeout_s; wscsl is built with LibTorch {}): {} ({})",
      world.size, job_of(world), master,
      world.agent_store ? "served by torchrun's agent" : "served by rank 0", timeout.count(),
      TORCH_VERSION, rendezvous_way_out(world, WSCSL_TORCHRUN), reason);
}

// Ends the process with `message` unless destroyed within `after`: the store client of one
// LibTorch blocks in its constructor, past its own timeout, on the store of another PyTorch's
// torchrun (LibTorch 1.13 on PyTorch 2's), and nothing else would end the wait.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds after, std::string message)
      : thread_([this, after, message = std::move(message)] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (woken_.wait_for(lock, after, [this] { return disarmed_; })) return;
          fmt::print(stderr, "wscsl: error: {}\n", message);
          std::fflush(nullptr);
          std::_Exit(1);
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      disarmed_ = true;
    }
    woken_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable woken_;
  bool disarmed_ = false;
  std::thread thread_;  // last: it starts once the members it uses exist
};

// Quiets LibTorch's log while this rank makes first contact: PyTorch 2's store client logs every
// failed try, and then the failure, with a C++ backtrace (hundreds of lines in a few seconds
// against another PyTorch's store); the failure is reported once, in one sentence with LibTorch's
// reason, when the bound passes.
class QuietLibTorchLog {
 public:
  QuietLibTorchLog() : level_(FLAGS_caffe2_log_level) {
    FLAGS_caffe2_log_level = std::max(level_, kFatalLevel);
  }
  ~QuietLibTorchLog() { FLAGS_caffe2_log_level = level_; }
  QuietLibTorchLog(const QuietLibTorchLog&) = delete;
  QuietLibTorchLog& operator=(const QuietLibTorchLog&) = delete;

 private:
  static constexpr int kFatalLevel = 3;  // c10's INFO 0, WARNING 1, ERROR 2, FATAL 3
  int level_;
};

// The grace the store's own timeout has before the watchdog ends the process.
constexpr std::chrono::seconds kWatchdogGrace{5};

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

c10::intrusive_ptr<c10d::Store> rendezvous_store(const World& world, const JoinTimeouts& timeouts) {
  c10d::TCPStoreOptions options;
  options.port = world.master_port;
  const bool serving = !world.agent_store && world.rank == 0;
  options.isServer = serving;
  options.numWorkers = static_cast<std::size_t>(world.size);
  options.waitWorkers = false;  // every rank's key below, within the same bound, instead
  options.timeout = timeouts.rendezvous;
  c10d_compat::serve_without_libuv(options, 0);
  const std::string master = fmt::format("{}:{}", world.master_address, world.master_port);
  const auto deadline = std::chrono::steady_clock::now() + timeouts.rendezvous;
  const Watchdog watchdog(
      timeouts.rendezvous + kWatchdogGrace,
      RankError(world.rank,
                first_contact_failure(world, master, timeouts.rendezvous,
                                      fmt::format("no answer from the store within {} s",
                                                  (timeouts.rendezvous + kWatchdogGrace).count())))
          .what());
  c10::intrusive_ptr<c10d::TCPStore> served;
  try {
    const QuietLibTorchLog quiet;
    served = c10::make_intrusive<c10d::TCPStore>(world.master_address, options);
  } catch (const std::exception& e) {
    if (serving && port_taken(world.master_port))
      throw Error(
          fmt::format("rank 0 cannot serve the rendezvous on {}: the port is already in "
                      "use (choose another MASTER_PORT)",
                      master));
    throw RankError(world.rank,
                    first_contact_failure(world, master, timeouts.rendezvous, reason_of(e)));
  }
  c10::intrusive_ptr<c10d::Store> store = served;
  if (world.agent_store)
    store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("/worker/attempt_{}", world.restart),
                                                   served);
  // Every rank announces itself and waits for the others' announcements, in what is left of the
  // bound: the first contact ends with every rank there, or with the sentence.
  std::vector<std::string> joined;
  for (int rank = 0; rank < world.size; ++rank)
    joined.push_back(fmt::format("wscsl/joined/{}", rank));
  try {
    store->set(joined[static_cast<std::size_t>(world.rank)], std::vector<std::uint8_t>{1});
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    store->wait(joined, std::max(left, std::chrono::milliseconds(1)));
  } catch (const std::exception& e) {
    throw RankError(world.rank,
                    first_contact_failure(world, master, timeouts.rendezvous, reason_of(e)));
  }
  served->setTimeout(timeouts.collective);
  return store;
}

}  // namespace wscsl::host
