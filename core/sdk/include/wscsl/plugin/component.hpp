// The root of every plugin-provided object.
#pragma once

#include <string>
#include <string_view>

#include "wscsl/plugin/contract.hpp"

namespace wscsl {

enum class Kind { Dataset, Backbone, TextEncoder, ConditionModule, Loss, Evaluator };

// Every kind, in the order a pipeline builds them.
inline constexpr Kind kAllKinds[] = {Kind::Dataset,         Kind::Backbone, Kind::TextEncoder,
                                     Kind::ConditionModule, Kind::Loss,     Kind::Evaluator};

// "dataset", "backbone", "text_encoder", "condition_module", "loss", "evaluator": the spelling used
// in pipelines
// and in `wscsl describe <kind>/<type>`.
std::string_view kind_name(Kind kind);
bool parse_kind(std::string_view name, Kind& kind);

class Component {
 public:
  virtual ~Component();  // out of line in the core library: the one key function for RTTI
  virtual Kind kind() const noexcept = 0;

  // Who this is, for messages: "condition_module 'discovernet' (plugin discovernet 0.1.0,
  // default.toml:21:1)". Set by whoever builds the component.
  const std::string& label() const { return label_; }
  void set_label(std::string label) { label_ = std::move(label); }

  // What it declared it provides and needs (contract.hpp); set by whoever builds the component,
  // and held against what it does.
  const Contract& contract() const { return contract_; }
  void set_contract(Contract contract) { contract_ = std::move(contract); }

 private:
  std::string label_;
  Contract contract_;
};

}  // namespace wscsl
