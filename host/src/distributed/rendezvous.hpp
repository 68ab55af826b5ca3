// How the processes of a job meet: the rendezvous store and Gloo's network device.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <string>

#include "c10d_compat.hpp"
#include "communicator.hpp"
#include "world.hpp"

namespace wscsl::host {

// The message of `e`, without the backtrace a c10::Error appends.
std::string reason_of(const std::exception& e);

// The error of a rank of `world` whose job did not all join the rendezvous on `master` within
// `timeout`, for `reason`.
RankError not_all_joined(const World& world, const std::string& master,
                         std::chrono::seconds timeout, const std::string& reason);

// The network device Gloo connects through: loopback for a job on this machine, else the
// interface GLOO_SOCKET_IFNAME names, else Gloo's default.
std::shared_ptr<::gloo::transport::Device> gloo_device(const World& world);

// The rendezvous store of `world`: served by rank 0 unless torchrun's agent serves one, which every
// rank then joins, keeping the keys of each restart of the job apart as PyTorch's env:// does.
// Every rank reaches it within `timeouts.rendezvous`, and its waits after that take
// `timeouts.collective`. Throws Error with one sentence, naming the endpoint, the launcher, the
// LibTorch and the way out, when the port is taken or the ranks do not all reach the store in time;
// ends the process with that sentence when the store's client hangs past its own timeout.
c10::intrusive_ptr<c10d::Store> rendezvous_store(const World& world, const JoinTimeouts& timeouts);

}  // namespace wscsl::host
