// Progress of a training epoch: a redrawn bar with rate, ETA and running loss on a terminal, one
// line every N steps otherwise (logs, CI).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace wscsl::host {

class Progress {
 public:
  Progress(std::string label, std::int64_t total, std::int64_t first, std::int64_t log_every,
           std::FILE* out);
  // `done` steps of `total` are finished; `loss` is the latest step's loss.
  void update(std::int64_t done, double loss);
  // Ends the bar (or prints a final line) with a summary.
  void finish(const std::string& summary);

 private:
  std::string line(std::int64_t done) const;
  std::string label_;
  std::int64_t total_, first_, log_every_;
  std::FILE* out_;
  bool terminal_;
  double running_loss_ = 0.0;
  bool has_loss_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace wscsl::host
