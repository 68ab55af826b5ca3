// The part of n things (a batch's triplets, a split's images) that one process of a job owns:
// positions [first, last), contiguous and in rank order, so that the processes' parts cover the n
// once and differ in size by at most one. With one process it is the whole.
#pragma once

#include <cstdint>

namespace wscsl::host {

struct Shard {
  int rank = 0;
  int processes = 1;
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t total = 0;  // the n shared

  // The part of `total` things that `rank` of `processes` owns.
  static Shard of(std::int64_t total, int rank, int processes);

  std::int64_t size() const { return last - first; }
  // Its part of the whole, size() / total.
  double fraction() const;
};

}  // namespace wscsl::host
