// How messages name a tensor's shape.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

namespace wscsl {

// "[2, 3, 32, 32]", or "an undefined tensor".
std::string shape_of(const at::Tensor& t);

// "Float [2, 3, 32, 32]": the element type, then the shape.
std::string dtype_and_shape_of(const at::Tensor& t);

}  // namespace wscsl
