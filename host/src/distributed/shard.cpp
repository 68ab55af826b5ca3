#include "shard.hpp"

namespace wscsl::host {

Shard Shard::of(std::int64_t total, int rank, int processes) {
  return {rank, processes, total * rank / processes, total * (rank + 1) / processes, total};
}

double Shard::fraction() const {
  return static_cast<double>(size()) / static_cast<double>(total);
}

}  // namespace wscsl::host
