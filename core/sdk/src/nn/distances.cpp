#include "wscsl/nn/distances.hpp"

namespace wscsl::nn {

torch::Tensor pairwise_distance(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b + 1e-6).norm(2, {-1});
}

torch::Tensor euclidean_distance(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).norm(2, {-1});
}

torch::Tensor normalize_clamped(const torch::Tensor& v, std::int64_t dim) {
  return v / v.norm(2, {dim}, /*keepdim=*/true).clamp_min(1e-12);
}

torch::Tensor normalize_offset(const torch::Tensor& v, std::int64_t dim) {
  return v / (v.norm(2, {dim}, /*keepdim=*/true) + 1e-10);
}

}  // namespace wscsl::nn
