// What every plugin interface shares: its kind's name, the checks of what a plugin returns.
#include "checks.hpp"
#include "wscsl/plugin/registrar.hpp"

namespace wscsl {

std::string shape_of(const at::Tensor& t) {
  if (!t.defined()) return "an undefined tensor";
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i)
    s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

std::string dtype_and_shape_of(const at::Tensor& t) {
  if (!t.defined()) return shape_of(t);
  return std::string(c10::toString(t.scalar_type())) + " " + shape_of(t);
}

Component::~Component() = default;
Registrar::~Registrar() = default;

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::Dataset:
      return "dataset";
    case Kind::Backbone:
      return "backbone";
    case Kind::TextEncoder:
      return "text_encoder";
    case Kind::ConditionModule:
      return "condition_module";
    case Kind::Loss:
      return "loss";
    case Kind::Evaluator:
      return "evaluator";
  }
  return "component";
}

bool parse_kind(std::string_view name, Kind& kind) {
  for (Kind k : kAllKinds) {
    if (kind_name(k) == name) {
      kind = k;
      return true;
    }
  }
  return false;
}

namespace detail {

std::string who(const Component& c) {
  return c.label().empty() ? std::string(kind_name(c.kind())) : c.label();
}

[[noreturn]] void broke_contract(const Component& c, const std::string& what) {
  throw ComponentError(fmt::format("{} broke its contract: {}", who(c), what));
}

void expect_shape(const Component& c, const char* name, const at::Tensor& t,
                  std::vector<int64_t> shape) {
  bool ok = t.defined() && t.dim() == static_cast<int64_t>(shape.size());
  for (std::size_t i = 0; ok && i < shape.size(); ++i)
    ok = t.size(static_cast<int64_t>(i)) == shape[i];
  if (!ok) {
    std::string expected = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
      expected += (i ? ", " : "") + std::to_string(shape[i]);
    broke_contract(c, fmt::format("{} has shape {}, expected {}]", name, shape_of(t), expected));
  }
}

void expect_floating(const Component& c, const char* name, const at::Tensor& t,
                     std::vector<int64_t> shape) {
  expect_shape(c, name, t, std::move(shape));
  if (!t.is_floating_point())
    broke_contract(
        c, fmt::format("{} is {}, expected a floating-point tensor", name, dtype_and_shape_of(t)));
}

}  // namespace detail
}  // namespace wscsl
