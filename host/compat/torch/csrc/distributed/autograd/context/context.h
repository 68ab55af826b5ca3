// Debian's LibTorch ships c10d's reducer.hpp without the distributed-autograd header it includes.
// The Reducer only holds a pointer to such a context and its gradient callback type; wscsl never
// uses distributed autograd, so these declarations are all reducer.hpp needs. Used only when the
// LibTorch in use lacks the real header (host/CMakeLists.txt).
#pragma once

#include <functional>
#include <memory>

#include <ATen/core/Tensor.h>

namespace torch::distributed::autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};
using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
