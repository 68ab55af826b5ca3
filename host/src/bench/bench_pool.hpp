// Runs of a bench as child processes of this executable, at most --jobs at once.
#pragma once

#include <string>
#include <vector>

#include "bench.hpp"

namespace wscsl::host {

// Runs `pending`, each in a child `wscsl bench ... --run <label>` writing its output to bench.log
// in its run directory. Returns the labels of the runs that failed or were not started.
std::vector<std::string> execute_in_children(const GlobalOptions& global, const Suite& suite,
                                             const BenchArgs& args,
                                             const std::vector<BenchRun>& pending);

}  // namespace wscsl::host
