#include "wscsl/nn/batch_norm.hpp"

#include <ATen/Context.h>
#include <torch/autograd.h>
#include <torch/types.h>

#include "wscsl/error.hpp"

namespace wscsl::nn {
namespace {

ProcessSum& installed_sum() {
  static ProcessSum sum;
  return sum;
}

// [N, C, ...] → the per-channel shape [1, C, 1, ...] of a statistic.
std::vector<std::int64_t> channel_shape(const at::Tensor& x) {
  std::vector<std::int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
  shape[1] = x.size(1);
  return shape;
}

std::vector<std::int64_t> reduced_dims(const at::Tensor& x) {
  std::vector<std::int64_t> dims = {0};
  for (std::int64_t d = 2; d < x.dim(); ++d)
    dims.push_back(d);
  return dims;
}

// y = γ·(x − μ)/√(σ² + ε) + β with μ and σ² over the elements of every process's batch; the
// statistics are summed in float64 (Σx, Σx², count), so their rounding does not depend on how
// the batch is shared. The backward pass sums Σdy and Σdy·x̂ the same way: the gradient of x is
// that of the whole batch, and γ and β get this process's share, which the data-parallel
// averaging adds up like any parameter's.
class SynchronisedBatchNormFunction
    : public torch::autograd::Function<SynchronisedBatchNormFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& weight, const at::Tensor& bias,
                            at::Tensor running_mean, at::Tensor running_var, double average_factor,
                            double eps) {
    const std::int64_t channels = x.size(1);
    const std::vector<std::int64_t> dims = reduced_dims(x);
    const at::Tensor wide = x.to(at::kDouble);
    at::Tensor stats =
        at::cat({wide.sum(dims), wide.square().sum(dims),
                 at::full({1}, static_cast<double>(x.numel() / channels), wide.options())});
    installed_sum()(stats);
    const double count = stats[2 * channels].item<double>();
    const at::Tensor mean = stats.slice(0, 0, channels) / count;
    const at::Tensor variance =
        (stats.slice(0, channels, 2 * channels) / count - mean.square()).clamp_min(0);
    {
      at::NoGradGuard no_grad;
      running_mean.mul_(1 - average_factor).add_(mean.to(running_mean.dtype()), average_factor);
      running_var.mul_(1 - average_factor)
          .add_((variance * (count / std::max(count - 1, 1.0))).to(running_var.dtype()),
                average_factor);
    }
    const std::vector<std::int64_t> shape = channel_shape(x);
    const at::Tensor invstd = (variance + eps).rsqrt().to(x.dtype()).view(shape);
    const at::Tensor normalised = (x - mean.to(x.dtype()).view(shape)) * invstd;
    ctx->save_for_backward({normalised, invstd, weight});
    ctx->saved_data["count"] = count;
    return normalised * weight.view(shape) + bias.view(shape);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& normalised = saved[0];
    const at::Tensor& invstd = saved[1];
    const at::Tensor& weight = saved[2];
    const double count = ctx->saved_data["count"].toDouble();
    const at::Tensor& dy = grads[0];
    const std::int64_t channels = dy.size(1);
    const std::vector<std::int64_t> dims = reduced_dims(dy);
    const at::Tensor sum_dy = dy.sum(dims);
    const at::Tensor sum_dy_normalised = (dy * normalised).sum(dims);
    at::Tensor sums = at::cat({sum_dy, sum_dy_normalised}).to(at::kDouble);
    installed_sum()(sums);
    const std::vector<std::int64_t> shape = channel_shape(dy);
    const at::Tensor mean_dy = (sums.slice(0, 0, channels) / count).to(dy.dtype()).view(shape);
    const at::Tensor mean_dy_normalised =
        (sums.slice(0, channels, 2 * channels) / count).to(dy.dtype()).view(shape);
    const at::Tensor dx =
        (dy - mean_dy - normalised * mean_dy_normalised) * invstd * weight.view(shape);
    return {dx, sum_dy_normalised, sum_dy, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

SynchronisedBatchNorm::SynchronisedBatchNorm(ProcessSum sum) {
  installed_sum() = std::move(sum);
}

SynchronisedBatchNorm::~SynchronisedBatchNorm() {
  installed_sum() = nullptr;
}

BatchNorm2dImpl::BatchNorm2dImpl(std::int64_t num_features) : num_features(num_features) {
  reset();
}

// In LibTorch's order, so that state dicts and optimiser states line up with its BatchNorm2d.
void BatchNorm2dImpl::reset() {
  weight = register_parameter("weight", torch::ones({num_features}));
  bias = register_parameter("bias", torch::zeros({num_features}));
  running_mean = register_buffer("running_mean", torch::zeros({num_features}));
  running_var = register_buffer("running_var", torch::ones({num_features}));
  num_batches_tracked = register_buffer("num_batches_tracked", torch::zeros({}, torch::kLong));
}

void BatchNorm2dImpl::pretty_print(std::ostream& stream) const {
  stream << "wscsl::nn::BatchNorm2d(" << num_features << ", eps=" << eps
         << ", momentum=" << momentum << ")";
}

at::Tensor BatchNorm2dImpl::forward(const at::Tensor& input) {
  if (input.dim() != 4)
    throw Error("batch norm expects [N, C, H, W] images, got " + std::to_string(input.dim()) +
                " dimensions");
  if (is_training()) num_batches_tracked.add_(1);
  if (is_training() && installed_sum())
    return SynchronisedBatchNormFunction::apply(input, weight, bias, running_mean, running_var,
                                                momentum, eps);
  return torch::batch_norm(input, weight, bias, running_mean, running_var, is_training(), momentum,
                           eps, at::globalContext().userEnabledCuDNN());
}

}  // namespace wscsl::nn
