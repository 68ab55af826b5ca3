#include "world.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "launchers.hpp"
#include "wscsl/error.hpp"

namespace wscsl::host {
namespace {

std::int64_t parse_number(const char* name, const std::string& value, std::int64_t min,
                          std::int64_t max) {
  std::int64_t parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size())
    throw Error(fmt::format("{}='{}' is not a whole number", name, value));
  if (parsed < min || parsed > max)
    throw Error(fmt::format("{}={} is out of range (expected {} to {})", name, parsed, min, max));
  return parsed;
}

// The variables of one launcher, read through one object so that every message names them.
class Variables {
 public:
  Variables(const Environment& env, Launcher launcher) : env_(env), launcher_(launcher) {}

  const char* get(const char* name) const { return env_(name); }
  // A variable the launcher always sets.
  std::string required(const char* name) const {
    const char* value = env_(name);
    if (!value)
      throw Error(
          fmt::format("{} is not set, and {} sets it for every process it starts: was "
                      "this one started by {}?",
                      name, launcher_name(launcher_), launcher_name(launcher_)));
    return value;
  }
  int count(const char* name, std::int64_t min, std::int64_t max) const {
    return static_cast<int>(parse_number(name, required(name), min, max));
  }
  int count_or(const char* name, std::int64_t min, std::int64_t max, int absent) const {
    const char* value = env_(name);
    return value ? static_cast<int>(parse_number(name, value, min, max)) : absent;
  }

 private:
  const Environment& env_;
  Launcher launcher_;
};

// `a` < `b`, or one sentence naming both.
void check_below(const char* a, int a_value, const char* b, int b_value) {
  if (a_value >= b_value)
    throw Error(fmt::format("{}={} does not fit {}={}: they run from 0 to {}", a, a_value, b,
                            b_value, b_value - 1));
}

void check_equal(const char* a, int a_value, const char* b, int b_value) {
  if (a_value != b_value)
    throw Error(fmt::format("{}={} differs from {}={}: wscsl is the only role of its job", a,
                            a_value, b, b_value));
}

constexpr int kMaxWorldSize = 65536;

// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
World ranks_from(const Variables& v, Launcher launcher) {
  World world;
  world.launcher = launcher;
  const char* size = v.get("WORLD_SIZE");
  const char* rank = v.get("RANK");
  if (!size || !rank)
    throw Error(fmt::format("the environment sets {} but not {}", size ? "WORLD_SIZE" : "RANK",
                            size ? "RANK" : "WORLD_SIZE"));
  world.size = v.count("WORLD_SIZE", 1, kMaxWorldSize);
  world.rank = v.count("RANK", 0, kMaxWorldSize - 1);
  if (world.rank >= world.size)
    throw Error(fmt::format("RANK={} does not fit WORLD_SIZE={}: ranks run from 0 to {}",
                            world.rank, world.size, world.size - 1));
  world.local_size = v.count_or("LOCAL_WORLD_SIZE", 1, world.size, 1);
  world.local_rank = v.count_or("LOCAL_RANK", 0, world.size - 1, 0);
  if (v.get("LOCAL_WORLD_SIZE"))
    check_below("LOCAL_RANK", world.local_rank, "LOCAL_WORLD_SIZE", world.local_size);
  if (const char* address = v.get("MASTER_ADDR"))
    world.master_address = address;
  else if (world.size > 1)
    throw Error(fmt::format("{} describes {} processes but MASTER_ADDR is not set",
                            launcher == Launcher::Environment
                                ? std::string("the environment")
                                : std::string(launcher_name(launcher)),
                            world.size));
  if (const char* port = v.get("MASTER_PORT"))
    world.master_port = static_cast<std::uint16_t>(parse_number("MASTER_PORT", port, 1, 65535));
  return world;
}

World torchrun_world(const Variables& v) {
  World world = ranks_from(v, Launcher::Torchrun);
  for (const char* name : {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"})
    v.required(name);
  world.node = v.count("GROUP_RANK", 0, kMaxWorldSize - 1);
  // GROUP_WORLD_SIZE is torchrun's since PyTorch 1.9; ROLE_* name wscsl's role, the only one.
  world.nodes = v.count_or("GROUP_WORLD_SIZE", 1, kMaxWorldSize, world.node + 1);
  check_below("GROUP_RANK", world.node, "GROUP_WORLD_SIZE", world.nodes);
  if (world.nodes > world.size)
    throw Error(fmt::format("GROUP_WORLD_SIZE={} is more machines than WORLD_SIZE={} processes",
                            world.nodes, world.size));
  check_equal("ROLE_RANK", v.count_or("ROLE_RANK", 0, kMaxWorldSize - 1, world.rank), "RANK",
              world.rank);
  check_equal("ROLE_WORLD_SIZE", v.count_or("ROLE_WORLD_SIZE", 1, kMaxWorldSize, world.size),
              "WORLD_SIZE", world.size);
  world.restart = v.count("TORCHELASTIC_RESTART_COUNT", 0, 1 << 30);
  world.max_restarts = v.count("TORCHELASTIC_MAX_RESTARTS", 0, 1 << 30);
  if (world.restart > world.max_restarts)
    throw Error(fmt::format("TORCHELASTIC_RESTART_COUNT={} is past TORCHELASTIC_MAX_RESTARTS={}",
                            world.restart, world.max_restarts));
  // Python's str(True) and str(False), as torchrun writes them.
  const std::string agent_store = v.required("TORCHELASTIC_USE_AGENT_STORE");
  if (agent_store != "True" && agent_store != "False")
    throw Error(
        fmt::format("TORCHELASTIC_USE_AGENT_STORE='{}' is neither True nor False", agent_store));
  world.agent_store = agent_store == "True";
  return world;
}

World nproc_world(const Variables& v) {
  World world = ranks_from(v, Launcher::Nproc);
  const int processes = v.count("WSCSL_NPROC", 1, kMaxWorldSize);
  if (processes != world.size || world.local_size != world.size)
    throw Error(
        fmt::format("WSCSL_NPROC={} (set by --nproc) does not fit WORLD_SIZE={} and "
                    "LOCAL_WORLD_SIZE={}",
                    processes, world.size, world.local_size));
  return world;
}

// Lightning's choice: jobs on one node whose ids differ in their last four digits meet on
// different ports.
std::uint16_t port_of_slurm_job(const std::string& job_id) {
  parse_number("SLURM_JOB_ID", job_id, 0, INT64_MAX);
  const std::string last = job_id.substr(job_id.size() > 4 ? job_id.size() - 4 : 0);
  return static_cast<std::uint16_t>(15000 + std::stoi(last));
}

World slurm_world(const Variables& v) {
  World world;
  world.launcher = Launcher::Slurm;
  world.size = v.count("SLURM_NTASKS", 1, kMaxWorldSize);
  world.rank = v.count("SLURM_PROCID", 0, kMaxWorldSize - 1);
  check_below("SLURM_PROCID", world.rank, "SLURM_NTASKS", world.size);
  world.nodes = v.count("SLURM_NNODES", 1, kMaxWorldSize);
  world.node = v.count("SLURM_NODEID", 0, kMaxWorldSize - 1);
  check_below("SLURM_NODEID", world.node, "SLURM_NNODES", world.nodes);
  world.local_rank = v.count("SLURM_LOCALID", 0, kMaxWorldSize - 1);
  const std::string per_node_text = v.required("SLURM_STEP_TASKS_PER_NODE");
  const std::vector<int> per_node = slurm_tasks_per_node(per_node_text);
  int total = 0;
  for (int n : per_node)
    total += n;
  if (static_cast<int>(per_node.size()) != world.nodes || total != world.size)
    throw Error(
        fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' does not describe SLURM_NNODES={} "
                    "nodes of SLURM_NTASKS={} tasks",
                    per_node_text, world.nodes, world.size));
  world.local_size = per_node[static_cast<std::size_t>(world.node)];
  if (world.local_rank >= world.local_size)
    throw Error(
        fmt::format("SLURM_LOCALID={} does not fit the {} task(s) of node {} in "
                    "SLURM_STEP_TASKS_PER_NODE='{}'",
                    world.local_rank, world.local_size, world.node, per_node_text));
  if (const char* address = v.get("MASTER_ADDR"))
    world.master_address = address;
  else
    world.master_address = first_slurm_host(v.required("SLURM_JOB_NODELIST"));
  if (const char* port = v.get("MASTER_PORT"))
    world.master_port = static_cast<std::uint16_t>(parse_number("MASTER_PORT", port, 1, 65535));
  else
    world.master_port = port_of_slurm_job(v.required("SLURM_JOB_ID"));
  return world;
}

}  // namespace

std::string first_slurm_host(const std::string& node_list) {
  std::string host;
  bool in_brackets = false;
  bool range_done = false;
  for (char c : node_list) {
    if (!in_brackets && c == ',') break;
    if (c == '[') {
      in_brackets = true;
    } else if (c == ']') {
      in_brackets = false;
    } else if (in_brackets) {
      if (c == '-' || c == ',') range_done = true;
      if (!range_done) host += c;
    } else {
      host += c;
    }
  }
  return host;
}

std::vector<int> slurm_tasks_per_node(const std::string& text) {
  std::vector<int> counts;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const std::size_t open = item.find("(x");
    const int tasks = static_cast<int>(
        parse_number("SLURM_STEP_TASKS_PER_NODE", item.substr(0, open), 0, kMaxWorldSize));
    int repeat = 1;
    if (open != std::string::npos) {
      if (item.back() != ')')
        throw Error(fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' is not of the form 2(x3),1", text));
      repeat = static_cast<int>(parse_number("SLURM_STEP_TASKS_PER_NODE",
                                             item.substr(open + 2, item.size() - open - 3), 1,
                                             kMaxWorldSize));
    }
    counts.insert(counts.end(), static_cast<std::size_t>(repeat), tasks);
    at = comma + 1;
  }
  return counts;
}

World world_from_environment(const Environment& env) {
  if (env("RANK") || env("WORLD_SIZE")) {
    if (env("TORCHELASTIC_RUN_ID")) return torchrun_world(Variables(env, Launcher::Torchrun));
    if (env("WSCSL_NPROC")) return nproc_world(Variables(env, Launcher::Nproc));
    for (const char* name : {"TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_USE_AGENT_STORE"})
      if (env(name))
        throw Error(
            fmt::format("the environment sets {} but not TORCHELASTIC_RUN_ID, which "
                        "torchrun sets for every worker",
                        name));
    return ranks_from(Variables(env, Launcher::Environment), Launcher::Environment);
  }
  // sbatch's own shell has SLURM_PROCID too; only an srun step is a job of several tasks.
  if (env("SLURM_STEP_ID") && env("SLURM_PROCID"))
    return slurm_world(Variables(env, Launcher::Slurm));
  return World{};
}

}  // namespace wscsl::host
