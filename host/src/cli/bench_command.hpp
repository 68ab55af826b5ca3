// `wscsl bench`: a suite's methods trained and evaluated over its seeds, or runs already trained,
// tabulated (bench/bench.hpp).
#pragma once

#include "bench/bench.hpp"
#include "command.hpp"

namespace wscsl::host {

class BenchCommand final : public Command {
 public:
  explicit BenchCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  BenchArgs args_;
};

}  // namespace wscsl::host
