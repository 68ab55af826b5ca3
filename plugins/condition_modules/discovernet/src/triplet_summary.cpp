#include "triplet_summary.hpp"

#include <vector>

namespace wscsl::discovernet {

torch::Tensor pair_tokens(const torch::Tensor& anchor, const torch::Tensor& close,
                          const torch::Tensor& far, std::int64_t pairs) {
  std::vector<torch::Tensor> tokens = {torch::cat({anchor, far}, 1),
                                       torch::cat({anchor, close}, 1)};
  if (pairs == 3) tokens.push_back(torch::cat({far, close}, 1));
  return torch::stack(tokens, 1);
}

}  // namespace wscsl::discovernet
