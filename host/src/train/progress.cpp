#include "progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace wscsl::host {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{:02}:{:02}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(std::string label, std::int64_t total, std::int64_t first,
                   std::int64_t log_every, std::FILE* out)
    : label_(std::move(label)),
      total_(total),
      first_(first),
      log_every_(log_every),
      out_(out),
      terminal_(::isatty(::fileno(out)) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

std::string Progress::line(std::int64_t done) const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done - first_) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : 0.0;
  const int percent = total_ ? static_cast<int>(100 * done / total_) : 100;
  std::string s = fmt::format("{} {}/{} ({:3}%) {:.1f} it/s ETA {}", label_, done, total_, percent,
                              rate, clock_text(eta));
  if (has_loss_) s += fmt::format(" loss {:.4f}", running_loss_);
  return s;
}

void Progress::update(std::int64_t done, double loss) {
  // Exponential moving average over roughly the last 50 steps.
  running_loss_ = has_loss_ ? 0.98 * running_loss_ + 0.02 * loss : loss;
  has_loss_ = true;
  if (terminal_) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(100) && done != total_) return;
    last_draw_ = now;
    constexpr int width = 24;
    const int filled = total_ ? static_cast<int>(width * done / total_) : width;
    fmt::print(out_, "\r\033[K[{}{}] {}", std::string(static_cast<std::size_t>(filled), '#'),
               std::string(static_cast<std::size_t>(width - filled), '.'), line(done));
    std::fflush(out_);
  } else if (done % log_every_ == 0 || done == total_) {
    fmt::print(out_, "{}\n", line(done));
    std::fflush(out_);
  }
}

void Progress::finish(const std::string& summary) {
  if (terminal_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "{}\n", summary);
  std::fflush(out_);
}

}  // namespace wscsl::host
