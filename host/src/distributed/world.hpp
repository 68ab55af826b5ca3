// Which process of a data-parallel job this one is, from the environment that wscsl's own
// launcher, torchrun and Slurm's srun set. What else wscsl knows of each launcher is in
// launchers.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wscsl::host {

// What started this process, for the rendezvous and for the commands a message suggests.
enum class Launcher {
  None,         // nothing: one process
  Nproc,        // wscsl's own --nproc
  Torchrun,     // torchrun (python -m torch.distributed.run)
  Slurm,        // a task of an srun step
  Environment,  // RANK and WORLD_SIZE set by hand or by another launcher
};

struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // the rank among the processes of this machine
  int local_size = 1;  // processes on this machine (LOCAL_WORLD_SIZE), which share its cores
  int node = 0;        // this machine among the job's (torchrun's GROUP_RANK, SLURM_NODEID)
  int nodes = 1;       // machines of the job (GROUP_WORLD_SIZE, SLURM_NNODES)
  std::string master_address = "127.0.0.1";  // where the rendezvous store is served
  std::uint16_t master_port = 29500;
  Launcher launcher = Launcher::None;
  // torchrun's agent serves the store on MASTER_ADDR:MASTER_PORT, and every process joins it as a
  // client (TORCHELASTIC_USE_AGENT_STORE=True); otherwise rank 0 serves it.
  bool agent_store = false;
  int restart = 0;       // TORCHELASTIC_RESTART_COUNT: how often torchrun has restarted the job
  int max_restarts = 0;  // TORCHELASTIC_MAX_RESTARTS
};

// A variable names its value, from the process's environment or a test's.
using Environment = std::function<const char*(const char*)>;

// torchrun's RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE,
// ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and TORCHELASTIC_* (torchrun sets
// TORCHELASTIC_RUN_ID for every worker); wscsl's --nproc sets RANK … MASTER_PORT and WSCSL_NPROC;
// RANK and WORLD_SIZE alone are a job described by hand. Otherwise, inside an srun step,
// SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_NNODES and
// SLURM_STEP_TASKS_PER_NODE, meeting at MASTER_ADDR (default: the first host of
// SLURM_JOB_NODELIST) and MASTER_PORT (default: 15000 + the last four digits of SLURM_JOB_ID, as
// Lightning does, so that two jobs on one node differ). Otherwise one process. A value that is not
// a number, does not fit the others, or is missing where the launcher always sets it throws Error
// with one sentence naming the variables.
World world_from_environment(const Environment& environment);

// The first host of a Slurm node list: "gpu[07-09,12],cpu1" gives "gpu07".
std::string first_slurm_host(const std::string& node_list);

// Slurm's tasks per node ("2(x3),1": 2 on each of three nodes, then 1) as one count per node.
std::vector<int> slurm_tasks_per_node(const std::string& text);

}  // namespace wscsl::host
