// The environment srun gives one task of a step.
#pragma once

#include <map>
#include <string>

namespace wscsl::test {

// Task `rank` of a step of 2 nodes with 2 tasks each, in job `job_id` on `node_list`.
inline std::map<std::string, std::string> slurm_task_of_two_by_two(int rank, int job_id,
                                                                   const std::string& node_list) {
  return {{"SLURM_JOB_ID", std::to_string(job_id)},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_LOCALID", std::to_string(rank % 2)},
          {"SLURM_NODEID", std::to_string(rank / 2)},
          {"SLURM_NTASKS", "4"},
          {"SLURM_NNODES", "2"},
          {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
          {"SLURM_JOB_NODELIST", node_list}};
}

}  // namespace wscsl::test
