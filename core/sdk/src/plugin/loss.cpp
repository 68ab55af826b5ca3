// The non-virtual half of Loss: what it needs is given, what it returns is checked.
#include "wscsl/plugin/loss.hpp"
#include "checks.hpp"

namespace wscsl {

using detail::broke_contract;
using detail::guarded;
using detail::who;

Loss::~Loss() = default;

std::map<std::string, torch::Tensor> Loss::compute(const LossInput& input) {
  for (const Need& need : contract().needs) {
    const bool met = need.resource == Resource::ReversedScores   ? input.reversed != nullptr
                     : need.resource == Resource::TrainingImages ? input.images != nullptr
                     : need.resource == Resource::AuxTerm ? input.scores.aux.count(need.name) > 0
                     : need.resource == Resource::TextFeatures ? input.items.has_texts(need.name)
                                                               : true;
    if (!met)
      throw ComponentError(fmt::format("{} needs {}, and its input has none", who(*this),
                                       describe_resource(need.resource, need.name)));
  }
  auto terms = guarded(*this, "compute", [&] { return compute_impl(input); });
  if (terms.empty()) broke_contract(*this, "a loss must return at least one term");
  for (const auto& [name, value] : terms) {
    if (!value.defined() || value.numel() != 1 || !value.is_floating_point())
      broke_contract(*this, fmt::format("term '{}' must be a floating-point scalar, got {}", name,
                                        dtype_and_shape_of(value)));
  }
  return terms;
}

}  // namespace wscsl
