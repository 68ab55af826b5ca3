#include "wscsl/eval/average_precision.hpp"

#include <algorithm>
#include <limits>

namespace wscsl::eval {

torch::Tensor average_precision(const torch::Tensor& relevant, std::int64_t cut,
                                WithoutRelevant none) {
  const torch::Tensor rel = relevant.to(torch::kDouble);
  const std::int64_t n = rel.size(1);
  const std::int64_t k = cut > 0 ? std::min(cut, n) : n;
  const torch::Tensor total = rel.sum(1);
  const torch::Tensor head = rel.slice(1, 0, k);
  const torch::Tensor positions = torch::arange(1, k + 1, rel.options());
  const torch::Tensor sums = (head * head.cumsum(1) / positions).sum(1);
  const double empty =
      none == WithoutRelevant::Zero ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  return torch::where(total > 0, sums / total.clamp_min(1), torch::full_like(total, empty));
}

}  // namespace wscsl::eval
