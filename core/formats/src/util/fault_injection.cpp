#include "wscsl/util/fault_injection.hpp"

#ifdef WSCSL_FAULT_INJECTION
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#endif

namespace wscsl {

#ifdef WSCSL_FAULT_INJECTION
void fault_point(const char* point) {
  static const std::string wanted = [] {
    const char* value = std::getenv("WSCSL_FAULT_AT");
    return std::string(value ? value : "");
  }();
  if (wanted.empty()) return;
  const std::size_t colon = wanted.find(':');
  if (wanted.compare(0, colon, point) != 0) return;
  static std::atomic<long> reached{0};  // points may be reached from several threads
  const long nth = colon == std::string::npos ? 1 : std::atol(wanted.c_str() + colon + 1);
  if (++reached == nth) ::kill(::getpid(), SIGKILL);
}
#else
void fault_point(const char*) {}
#endif

}  // namespace wscsl
