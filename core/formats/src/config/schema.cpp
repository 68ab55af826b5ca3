// Facts and the descriptions of fields (binder.cpp binds with them).
#include <cmath>

#include <fmt/format.h>

#include "wscsl/config/binder.hpp"
#include "wscsl/config/facts.hpp"
#include "wscsl/config/field_description.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl {

void Facts::set(const std::string& name, ConfigNode value, std::string origin) {
  values_[name] = {std::move(value), std::move(origin)};
}

const ConfigNode* Facts::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second.first;
}

std::string Facts::origin(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string() : it->second.second;
}

std::int64_t Facts::integer(const std::string& name) const {
  const ConfigNode* n = find(name);
  if (!n || !n->is_integer())
    throw Error(fmt::format("internal: fact '{}' was not established as an integer", name));
  return n->as_integer();
}

const std::vector<Fact>& known_facts() {
  static const std::vector<Fact> all = {facts::dataset_num_conditions,
                                        facts::dataset_channels,
                                        facts::dataset_height,
                                        facts::dataset_width,
                                        facts::dataset_text_features,
                                        facts::backbone_embedding_dim,
                                        facts::backbone_feature_map_channels,
                                        facts::condition_module_num_embeddings,
                                        facts::condition_module_output_dim};
  return all;
}

bool is_known_fact(const std::string& name) {
  for (const Fact& f : known_facts())
    if (name == f.name) return true;
  return false;
}

std::string nearest_fact(const std::string& name) {
  std::vector<std::string> names;
  for (const Fact& f : known_facts())
    names.push_back(f.name);
  return closest_match(name, names);
}

namespace {

std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return ConfigNode::floating(v).repr();
}

}  // namespace

std::string FieldDescription::range_text() const {
  if (!min && !max) return {};
  std::string lo = min ? std::string(min_exclusive ? "(" : "[") + number_text(*min) : "(-inf";
  std::string hi = max ? number_text(*max) + (max_exclusive ? ")" : "]") : "inf)";
  return lo + ", " + hi;
}

std::string FieldDescription::constraint_text() const {
  std::vector<std::string> parts;
  if (!choices.empty()) parts.push_back("one of: " + join(choices, ", "));
  if (min || max) parts.push_back("range " + range_text());
  if (!applies_when.empty()) parts.push_back("read only with " + applies_when);
  return join(parts, "; ");
}

const FieldDescription* SchemaDescription::find(const std::string& name) const {
  for (const FieldDescription& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> SchemaDescription::field_names() const {
  std::vector<std::string> names;
  for (const FieldDescription& f : fields)
    names.push_back(f.name);
  return names;
}

}  // namespace wscsl
