// Which process of a data-parallel job this one is, from the environment that wscsl's own
// launcher, torchrun and Slurm's srun set.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace wscsl::host {

struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // the rank among the processes of this machine
  int local_size = 1;  // processes on this machine (LOCAL_WORLD_SIZE), which share its cores
  std::string master_address = "127.0.0.1";  // where rank 0 serves the rendezvous store
  std::uint16_t master_port = 29500;
  std::string source = "one process";  // which variables described the job, for messages
};

using Environment = std::function<const char*(const char*)>;

// torchrun's RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; otherwise, inside an srun
// step, SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID with MASTER_ADDR or the first host of
// SLURM_JOB_NODELIST; otherwise one process. A value that is not a number or does not fit
// (RANK >= WORLD_SIZE, a port above 65535) throws Error naming the variable.
World world_from_environment(const Environment& environment);

// The first host of a Slurm node list: "gpu[07-09,12],cpu1" gives "gpu07".
std::string first_slurm_host(const std::string& node_list);

}  // namespace wscsl::host
