#include "world.hpp"

#include <charconv>

#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl::host {
namespace {

std::int64_t parse_count(const char* name, const char* text, std::int64_t min, std::int64_t max) {
  const std::string value = text;
  std::int64_t parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size())
    throw Error(fmt::format("{}='{}' is not a whole number", name, value));
  if (parsed < min || parsed > max)
    throw Error(fmt::format("{}={} is out of range (expected {} to {})", name, parsed, min, max));
  return parsed;
}

struct Variables {
  const char* rank;
  const char* size;
  const char* local_rank;
};

World world_from(const Environment& env, const Variables& names, std::string source,
                 const std::string& default_address) {
  World world;
  world.source = std::move(source);
  const char* size = env(names.size);
  const char* rank = env(names.rank);
  if (!size || !rank)
    throw Error(fmt::format("{} sets {} but not {}", world.source, size ? names.size : names.rank,
                            size ? names.rank : names.size));
  world.size = static_cast<int>(parse_count(names.size, size, 1, 65536));
  world.rank = static_cast<int>(parse_count(names.rank, rank, 0, 65535));
  if (world.rank >= world.size)
    throw Error(fmt::format("{}={} does not fit {}={}: ranks run from 0 to {}", names.rank,
                            world.rank, names.size, world.size, world.size - 1));
  if (const char* local = env(names.local_rank))
    world.local_rank = static_cast<int>(parse_count(names.local_rank, local, 0, world.size - 1));
  if (const char* local_size = env("LOCAL_WORLD_SIZE"))
    world.local_size = static_cast<int>(parse_count("LOCAL_WORLD_SIZE", local_size, 1, world.size));
  if (const char* address = env("MASTER_ADDR"))
    world.master_address = address;
  else if (world.size > 1 && default_address.empty())
    throw Error(fmt::format("{} describes {} processes but MASTER_ADDR is not set", world.source,
                            world.size));
  else if (!default_address.empty())
    world.master_address = default_address;
  if (const char* port = env("MASTER_PORT"))
    world.master_port = static_cast<std::uint16_t>(parse_count("MASTER_PORT", port, 1, 65535));
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

World world_from_environment(const Environment& env) {
  if (env("RANK") || env("WORLD_SIZE"))
    return world_from(env, {"RANK", "WORLD_SIZE", "LOCAL_RANK"}, "the environment (torchrun)", {});
  // sbatch's own shell has SLURM_PROCID too; only an srun step is a job of several tasks.
  if (env("SLURM_STEP_ID") && env("SLURM_PROCID")) {
    const char* nodes = env("SLURM_JOB_NODELIST");
    return world_from(env, {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}, "Slurm",
                      nodes ? first_slurm_host(nodes) : std::string("127.0.0.1"));
  }
  return World{};
}

}  // namespace wscsl::host
