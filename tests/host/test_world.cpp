// Which rank of which job: torchrun's, --nproc's and Slurm's variables, the ones that do not fit,
// and the command that resumes a run under each launcher.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "distributed/launchers.hpp"
#include "distributed/world.hpp"
#include "slurm_step.hpp"
#include "wscsl/error.hpp"

using namespace wscsl::host;

namespace {

Environment environment(const std::map<std::string, std::string>& variables) {
  return [variables](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

std::string error_of(const std::map<std::string, std::string>& variables) {
  try {
    world_from_environment(environment(variables));
  } catch (const wscsl::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(World, NoVariablesIsOneProcess) {
  const World world = world_from_environment(environment({}));
  EXPECT_EQ(world.size, 1);
  EXPECT_EQ(world.rank, 0);
}

// What torchrun 1.13 gives the second worker of `--nproc_per_node 2` (the default rendezvous).
std::map<std::string, std::string> torchrun_worker() {
  return {{"RANK", "1"},
          {"WORLD_SIZE", "2"},
          {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "2"},
          {"GROUP_RANK", "0"},
          {"GROUP_WORLD_SIZE", "1"},
          {"ROLE_NAME", "default"},
          {"ROLE_RANK", "1"},
          {"ROLE_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "29500"},
          {"TORCHELASTIC_RUN_ID", "none"},
          {"TORCHELASTIC_RESTART_COUNT", "0"},
          {"TORCHELASTIC_MAX_RESTARTS", "0"},
          {"TORCHELASTIC_USE_AGENT_STORE", "True"}};
}

std::map<std::string, std::string> with(std::map<std::string, std::string> variables,
                                        const std::map<std::string, std::string>& changes) {
  for (const auto& [name, value] : changes)
    if (value.empty())
      variables.erase(name);
    else
      variables[name] = value;
  return variables;
}

TEST(World, TorchrunsVariables) {
  const World world = world_from_environment(environment({{"RANK", "3"},
                                                          {"WORLD_SIZE", "8"},
                                                          {"LOCAL_RANK", "1"},
                                                          {"LOCAL_WORLD_SIZE", "2"},
                                                          {"MASTER_ADDR", "10.0.0.7"},
                                                          {"MASTER_PORT", "29400"}}));
  EXPECT_EQ(world.rank, 3);
  EXPECT_EQ(world.size, 8);
  EXPECT_EQ(world.local_rank, 1);
  EXPECT_EQ(world.local_size, 2);
  EXPECT_EQ(world.master_address, "10.0.0.7");
  EXPECT_EQ(world.master_port, 29400);
  EXPECT_EQ(world.launcher, Launcher::Environment);
  EXPECT_FALSE(world.agent_store);

  const World worker = world_from_environment(environment(torchrun_worker()));
  EXPECT_EQ(worker.launcher, Launcher::Torchrun);
  EXPECT_EQ(worker.rank, 1);
  EXPECT_EQ(worker.local_size, 2);
  EXPECT_EQ(worker.node, 0);
  EXPECT_EQ(worker.nodes, 1);
  EXPECT_TRUE(worker.agent_store);
  EXPECT_EQ(worker.restart, 0);

  // --standalone and c10d (PyTorch 1.13): rank 0 serves; the second of two nodes; a restart.
  const World restarted = world_from_environment(
      environment(with(torchrun_worker(), {{"TORCHELASTIC_USE_AGENT_STORE", "False"},
                                           {"GROUP_RANK", "1"},
                                           {"GROUP_WORLD_SIZE", "2"},
                                           {"LOCAL_RANK", "0"},
                                           {"LOCAL_WORLD_SIZE", "1"},
                                           {"TORCHELASTIC_RESTART_COUNT", "1"},
                                           {"TORCHELASTIC_MAX_RESTARTS", "3"}})));
  EXPECT_FALSE(restarted.agent_store);
  EXPECT_EQ(restarted.node, 1);
  EXPECT_EQ(restarted.nodes, 2);
  EXPECT_EQ(restarted.restart, 1);
  EXPECT_EQ(restarted.max_restarts, 3);

  const World nproc = world_from_environment(environment({{"RANK", "0"},
                                                          {"WORLD_SIZE", "2"},
                                                          {"LOCAL_RANK", "0"},
                                                          {"LOCAL_WORLD_SIZE", "2"},
                                                          {"MASTER_ADDR", "127.0.0.1"},
                                                          {"MASTER_PORT", "40000"},
                                                          {"WSCSL_NPROC", "2"}}));
  EXPECT_EQ(nproc.launcher, Launcher::Nproc);
}

TEST(World, AnInconsistentTorchrunEnvironmentIsOneSentence) {
  const auto error = [](const std::map<std::string, std::string>& changes) {
    return error_of(with(torchrun_worker(), changes));
  };
  EXPECT_EQ(error({{"TORCHELASTIC_USE_AGENT_STORE", ""}}),
            "TORCHELASTIC_USE_AGENT_STORE is not set, and torchrun sets it for every process it "
            "starts: was this one started by torchrun?");
  EXPECT_EQ(error({{"GROUP_RANK", ""}}),
            "GROUP_RANK is not set, and torchrun sets it for every process it starts: was this one "
            "started by torchrun?");
  EXPECT_EQ(error({{"TORCHELASTIC_USE_AGENT_STORE", "yes"}}),
            "TORCHELASTIC_USE_AGENT_STORE='yes' is neither True nor False");
  EXPECT_EQ(error({{"TORCHELASTIC_RESTART_COUNT", "2"}, {"TORCHELASTIC_MAX_RESTARTS", "1"}}),
            "TORCHELASTIC_RESTART_COUNT=2 is past TORCHELASTIC_MAX_RESTARTS=1");
  EXPECT_EQ(error({{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "1"}}),
            "LOCAL_RANK=1 does not fit LOCAL_WORLD_SIZE=1: they run from 0 to 0");
  EXPECT_EQ(error({{"GROUP_RANK", "2"}, {"GROUP_WORLD_SIZE", "2"}}),
            "GROUP_RANK=2 does not fit GROUP_WORLD_SIZE=2: they run from 0 to 1");
  EXPECT_EQ(error({{"GROUP_WORLD_SIZE", "3"}}),
            "GROUP_WORLD_SIZE=3 is more machines than WORLD_SIZE=2 processes");
  EXPECT_EQ(error({{"ROLE_RANK", "0"}}),
            "ROLE_RANK=0 differs from RANK=1: wscsl is the only role of its job");
  EXPECT_EQ(error({{"MASTER_PORT", ""}}),
            "MASTER_PORT is not set, and torchrun sets it for every process it starts: was this "
            "one started by torchrun?");
  EXPECT_EQ(error_of({{"RANK", "0"},
                      {"WORLD_SIZE", "2"},
                      {"MASTER_ADDR", "h"},
                      {"TORCHELASTIC_RESTART_COUNT", "1"}}),
            "the environment sets TORCHELASTIC_RESTART_COUNT but not TORCHELASTIC_RUN_ID, which "
            "torchrun sets for every worker");
  EXPECT_EQ(error_of({{"RANK", "0"},
                      {"WORLD_SIZE", "2"},
                      {"LOCAL_WORLD_SIZE", "2"},
                      {"MASTER_ADDR", "h"},
                      {"WSCSL_NPROC", "3"}}),
            "WSCSL_NPROC=3 (set by --nproc) does not fit WORLD_SIZE=2 and LOCAL_WORLD_SIZE=2");
}

// What srun gives task `rank` of a step of 2 nodes with 2 tasks each, in job 4242117.
std::map<std::string, std::string> slurm_task(int rank) {
  return wscsl::test::slurm_task_of_two_by_two(rank, 4242117, "node[07-08]");
}

TEST(World, SlurmTasksMeetOnTheFirstNodeAtTheJobsPort) {
  for (int rank = 0; rank < 4; ++rank) {
    const World world = world_from_environment(environment(slurm_task(rank)));
    EXPECT_EQ(world.launcher, Launcher::Slurm);
    EXPECT_EQ(world.rank, rank);
    EXPECT_EQ(world.size, 4);
    EXPECT_EQ(world.local_rank, rank % 2);
    EXPECT_EQ(world.local_size, 2);
    EXPECT_EQ(world.node, rank / 2);
    EXPECT_EQ(world.nodes, 2);
    EXPECT_EQ(world.master_address, "node07");
    EXPECT_EQ(world.master_port, 15000 + 2117);  // as Lightning: the job id's last four digits
  }
  // MASTER_ADDR and MASTER_PORT win; sbatch's own shell (no step) is one process.
  const World given = world_from_environment(
      environment(with(slurm_task(0), {{"MASTER_ADDR", "head"}, {"MASTER_PORT", "29600"}})));
  EXPECT_EQ(given.master_address, "head");
  EXPECT_EQ(given.master_port, 29600);
  EXPECT_EQ(world_from_environment(environment(with(slurm_task(0), {{"SLURM_STEP_ID", ""}}))).size,
            1);
  EXPECT_EQ(error_of(with(slurm_task(3), {{"SLURM_STEP_TASKS_PER_NODE", "3,1"}})),
            "SLURM_LOCALID=1 does not fit the 1 task(s) of node 1 in "
            "SLURM_STEP_TASKS_PER_NODE='3,1'");
  EXPECT_EQ(error_of(with(slurm_task(0), {{"SLURM_STEP_TASKS_PER_NODE", "2"}})),
            "SLURM_STEP_TASKS_PER_NODE='2' does not describe SLURM_NNODES=2 nodes of "
            "SLURM_NTASKS=4 tasks");
  EXPECT_EQ(error_of(with(slurm_task(0), {{"SLURM_JOB_ID", ""}})),
            "SLURM_JOB_ID is not set, and srun sets it for every process it starts: was this one "
            "started by srun?");
}

TEST(World, SlurmTasksPerNode) {
  EXPECT_EQ(slurm_tasks_per_node("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(slurm_tasks_per_node("4"), (std::vector<int>{4}));
  EXPECT_THROW(slurm_tasks_per_node("2(x"), wscsl::Error);
}

TEST(World, TheResumeCommandIsTheLaunchers) {
  World world;
  EXPECT_EQ(resume_command(world, "runs/p"), "wscsl train --resume runs/p");
  world.size = 2;
  world.launcher = Launcher::Nproc;
  EXPECT_EQ(resume_command(world, "runs/p"), "wscsl train --resume runs/p --nproc 2");
  world.launcher = Launcher::Torchrun;
  EXPECT_EQ(resume_command(world, "runs/p"), "torchrun … --no_python wscsl train --resume runs/p");
  world.launcher = Launcher::Slurm;
  EXPECT_EQ(resume_command(world, "runs/p"), "srun wscsl train --resume runs/p");
}

TEST(World, FirstHostOfSlurmNodeLists) {
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(first_slurm_host("gpu[007-009]"), "gpu007");
  EXPECT_EQ(first_slurm_host("a[3,5-6]b,c"), "a3b");
  EXPECT_EQ(first_slurm_host("rack[2]-n[4-5]"), "rack2-n4");
}

TEST(World, VariablesThatDoNotFitAreOneSentence) {
  EXPECT_EQ(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}),
            "RANK=2 does not fit WORLD_SIZE=2: ranks run from 0 to 1");
  EXPECT_EQ(error_of({{"RANK", "one"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}),
            "RANK='one' is not a whole number");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
            "WORLD_SIZE=0 is out of range (expected 1 to 65536)");
  EXPECT_EQ(error_of({{"WORLD_SIZE", "2"}}), "the environment sets WORLD_SIZE but not RANK");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}}),
            "the environment describes 2 processes but MASTER_ADDR is not set");
  EXPECT_EQ(
      error_of(
          {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}),
      "MASTER_PORT=70000 is out of range (expected 1 to 65535)");
}
