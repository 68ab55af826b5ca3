// Which rank of which job: torchrun's and Slurm's variables, and the ones that do not fit.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "distributed/world.hpp"
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
}

TEST(World, SlurmTasksMeetOnTheFirstNode) {
  const World world =
      world_from_environment(environment({{"SLURM_STEP_ID", "0"},
                                          {"SLURM_PROCID", "5"},
                                          {"SLURM_NTASKS", "8"},
                                          {"SLURM_LOCALID", "1"},
                                          {"SLURM_JOB_NODELIST", "gpu[07-09,12],cpu1"}}));
  EXPECT_EQ(world.rank, 5);
  EXPECT_EQ(world.size, 8);
  EXPECT_EQ(world.local_rank, 1);
  EXPECT_EQ(world.master_address, "gpu07");
  EXPECT_EQ(world.master_port, 29500);
  // MASTER_ADDR wins over the node list; sbatch's own shell (no step) is one process.
  EXPECT_EQ(world_from_environment(environment({{"SLURM_STEP_ID", "0"},
                                                {"SLURM_PROCID", "0"},
                                                {"SLURM_NTASKS", "2"},
                                                {"SLURM_JOB_NODELIST", "n[1-2]"},
                                                {"MASTER_ADDR", "head"}}))
                .master_address,
            "head");
  EXPECT_EQ(
      world_from_environment(environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}})).size, 1);
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
  EXPECT_EQ(error_of({{"WORLD_SIZE", "2"}}),
            "the environment (torchrun) sets WORLD_SIZE but not RANK");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}}),
            "the environment (torchrun) describes 2 processes but MASTER_ADDR is not set");
  EXPECT_EQ(
      error_of(
          {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}),
      "MASTER_PORT=70000 is out of range (expected 1 to 65535)");
}
