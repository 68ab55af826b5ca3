#include "wscsl/config/node.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "wscsl/util/text.hpp"

namespace wscsl {

std::string SourceLocation::str() const {
  if (line <= 0) return file;
  if (column <= 0) return file + ":" + std::to_string(line);
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

ConfigNode ConfigNode::table(SourceLocation where) {
  ConfigNode n;
  n.type_ = Type::Table;
  n.location_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::array(SourceLocation where) {
  ConfigNode n;
  n.type_ = Type::Array;
  n.location_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::string(std::string v, SourceLocation where) {
  ConfigNode n;
  n.type_ = Type::String;
  n.string_ = std::move(v);
  n.location_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::integer(std::int64_t v, SourceLocation where) {
  ConfigNode n;
  n.type_ = Type::Integer;
  n.integer_ = v;
  n.location_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::floating(double v, SourceLocation where) {
  ConfigNode n;
  n.type_ = Type::Float;
  n.float_ = v;
  n.location_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::boolean(bool v, SourceLocation where) {
  ConfigNode n;
  n.type_ = Type::Boolean;
  n.boolean_ = v;
  n.location_ = std::move(where);
  return n;
}

const ConfigMember* ConfigNode::find_member(std::string_view key) const {
  for (const ConfigMember& m : members_)
    if (m.key == key) return &m;
  return nullptr;
}

const ConfigNode* ConfigNode::find(std::string_view key) const {
  const ConfigMember* m = find_member(key);
  return m ? &m->value : nullptr;
}

ConfigNode* ConfigNode::find(std::string_view key) {
  for (ConfigMember& m : members_)
    if (m.key == key) return &m.value;
  return nullptr;
}

ConfigNode& ConfigNode::set(const std::string& key, ConfigNode value, SourceLocation key_location) {
  for (ConfigMember& m : members_) {
    if (m.key == key) {
      m.value = std::move(value);
      if (key_location.known()) m.key_location = std::move(key_location);
      return m.value;
    }
  }
  members_.push_back(ConfigMember{key, std::move(key_location), std::move(value)});
  return members_.back().value;
}

bool ConfigNode::erase(std::string_view key) {
  for (auto it = members_.begin(); it != members_.end(); ++it) {
    if (it->key == key) {
      members_.erase(it);
      return true;
    }
  }
  return false;
}

std::string ConfigNode::describe_type(Type t) {
  switch (t) {
    case Type::Table:
      return "a table";
    case Type::Array:
      return "an array";
    case Type::String:
      return "a string";
    case Type::Integer:
      return "an integer";
    case Type::Float:
      return "a float";
    case Type::Boolean:
      return "a boolean";
  }
  return "a value";
}

namespace {

std::string format_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[40];
  // The shortest of %.15g..%.17g that reads back exactly keeps files readable and lossless.
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  std::string s = buffer;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string ConfigNode::repr() const {
  switch (type_) {
    case Type::String:
      return quote_toml(string_);
    case Type::Integer:
      return std::to_string(integer_);
    case Type::Float:
      return format_float(float_);
    case Type::Boolean:
      return boolean_ ? "true" : "false";
    case Type::Array: {
      std::vector<std::string> parts;
      for (const ConfigNode& item : items_)
        parts.push_back(item.repr());
      return "[" + join(parts, ", ") + "]";
    }
    case Type::Table: {
      std::vector<std::string> parts;
      for (const ConfigMember& m : members_)
        parts.push_back(toml_key(m.key) + " = " + m.value.repr());
      return parts.empty() ? "{}" : "{ " + join(parts, ", ") + " }";
    }
  }
  return {};
}

bool ConfigNode::operator==(const ConfigNode& other) const {
  if (is_number() && other.is_number() && type_ != other.type_)
    return as_number() == other.as_number();
  if (type_ != other.type_) return false;
  switch (type_) {
    case Type::String:
      return string_ == other.string_;
    case Type::Integer:
      return integer_ == other.integer_;
    case Type::Float:
      return float_ == other.float_;
    case Type::Boolean:
      return boolean_ == other.boolean_;
    case Type::Array:
      return items_ == other.items_;
    case Type::Table: {
      // TOML tables are unordered: the same members in another order are the same table.
      if (members_.size() != other.members_.size()) return false;
      for (const ConfigMember& m : members_) {
        const ConfigNode* theirs = other.find(m.key);
        if (!theirs || m.value != *theirs) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace wscsl
