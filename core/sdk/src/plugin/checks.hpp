// The checks every interface's non-virtual half runs on what a plugin returns: failures leave as
// a ComponentError that names the component.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/plugin/component.hpp"
#include "wscsl/util/tensor_text.hpp"

namespace wscsl::detail {

std::string who(const Component& c);

// Runs plugin code; any exception leaves as a core-owned error that names the component.
template <class F>
auto guarded(const Component& c, const char* call, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw ComponentError(
        fmt::format("{} failed in {}: {}", who(c), call, e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw ComponentError(fmt::format("{} failed in {}: {}", who(c), call, e.what()));
  }
}

[[noreturn]] void broke_contract(const Component& c, const std::string& what);

void expect_shape(const Component& c, const char* name, const at::Tensor& t,
                  std::vector<int64_t> shape);

// What a component computes with: a floating-point tensor of `shape`.
void expect_floating(const Component& c, const char* name, const at::Tensor& t,
                     std::vector<int64_t> shape);

}  // namespace wscsl::detail
