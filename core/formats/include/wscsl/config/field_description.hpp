// What a schema says about its fields, for `wscsl describe`, the docs and the binder's messages.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wscsl/config/node.hpp"

namespace wscsl {

struct FieldDescription {
  std::string name;
  std::string type_name;  // "float", "integer", "boolean", "string", "list of strings", ...
  std::string doc;
  std::optional<ConfigNode> default_value;  // absent for optional fields left unset
  std::optional<double> min, max;
  bool min_exclusive = false;
  bool max_exclusive = false;
  std::vector<std::string> choices;      // allowed values, spelled as TOML would
  std::vector<std::string> choice_docs;  // one line per choice of an enumeration (or empty)
  bool required = false;
  std::string derived_from;  // fact injected by the host; a restated value must agree
  std::string default_from;  // fact used when the key is absent; a different value is allowed
  bool is_path = false;      // relative paths resolve against the directory of the setting file
  // When the option is read at all ("optimizer = \"sgd\""); empty: always. Written where it is
  // not read, it is reported at its line, and resolved pipelines leave it out.
  std::string applies_when;

  // "range [0, inf)", "one of: a, b", ... ; empty when unconstrained.
  std::string constraint_text() const;
  // "[0, inf)", "(0, 10]"; empty without bounds.
  std::string range_text() const;
};

struct SchemaDescription {
  std::string doc;
  std::vector<FieldDescription> fields;

  const FieldDescription* find(const std::string& name) const;
  std::vector<std::string> field_names() const;
};

}  // namespace wscsl
