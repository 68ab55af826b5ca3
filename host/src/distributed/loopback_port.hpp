// The port a job's rendezvous is served on, when the job is started here and picks its own.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>

namespace wscsl::host {

// A loopback port that no socket holds now and that the kernel gives no other socket on its own.
// The port is bound later, by a process still starting (rank 0, torchrun's agent); a port the
// kernel chose (bind to port 0) is back in the pool meanwhile, where any connect() or bind to
// port 0 on the machine — another job's gloo pairs, say — may take it first. Ports below
// net.ipv4.ip_local_port_range are never chosen by the kernel, so only a program naming the same
// port can take it; two launchers doing so pick from 8192 at random. Returns 0 when none is free.
inline std::uint16_t unclaimed_loopback_port() {
  int lowest_kernel_port = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> lowest_kernel_port;
  const int last = lowest_kernel_port - 1;
  const int first = last - 8191 < 1024 ? 1024 : last - 8191;
  if (first > last) return 0;
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> any(first, last);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const auto port = static_cast<std::uint16_t>(any(random));
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    if (free) return port;
  }
  return 0;
}

}  // namespace wscsl::host
