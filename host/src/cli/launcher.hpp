// `--nproc N`: a data-parallel job of N processes on this machine.
#pragma once

#include <string>
#include <vector>

namespace wscsl::host {

// Runs this wscsl `processes` times with `args` (its command line without --nproc) as the ranks
// of one job that meets on a free loopback port, each in the environment torchrun would give it
// (and WSCSL_NPROC, which names the launcher in messages).
// Rank 0's output is the job's; the other ranks' standard output is dropped, their errors shown.
// SIGINT and SIGTERM are passed on to every rank (they stop together at a step boundary). When a
// rank fails, the others are given `grace_s` seconds to stop and are then killed. Returns the
// job's exit status: that of the first rank to fail, else 0 (130 when interrupted).
int launch_local(int processes, const std::vector<std::string>& args, int grace_s = 30);

}  // namespace wscsl::host
