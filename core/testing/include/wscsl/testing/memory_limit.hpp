// Runs a reader in a child process whose address space may grow by at most a given number of bytes
// beyond what it has mapped when it starts: a hostile file must hit the reader's own bound before
// memory runs out, and an allocation past the limit shows as OutOfMemory instead of taking the
// test machine down.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace wscsl::testing {

struct LimitedRun {
  enum class Outcome {
    Returned,     // `read` returned
    Refused,      // it threw wscsl::DataError: `message` is its text
    OutOfMemory,  // it threw std::bad_alloc
    Failed,       // it threw something else (`message`), or the child died (a signal)
  };
  Outcome outcome = Outcome::Failed;
  std::string message;
};

LimitedRun run_with_memory_limit(const std::function<void()>& read, std::size_t extra_bytes);

// Whether run_with_memory_limit can limit memory: not under a sanitizer, which reserves terabytes
// of address space for its shadow memory.
bool memory_limit_available();

}  // namespace wscsl::testing
