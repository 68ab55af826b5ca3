// A configuration tree that remembers the source position of every key and value. It is the only
// representation of TOML the rest of wscsl (and every plugin) sees: no TOML++ type crosses it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wscsl/config/source_location.hpp"

namespace wscsl {

struct ConfigMember;

class ConfigNode {
 public:
  enum class Type { Table, Array, String, Integer, Float, Boolean };

  ConfigNode() = default;
  static ConfigNode table(SourceLocation where = {});
  static ConfigNode array(SourceLocation where = {});
  static ConfigNode string(std::string v, SourceLocation where = {});
  static ConfigNode integer(std::int64_t v, SourceLocation where = {});
  static ConfigNode floating(double v, SourceLocation where = {});
  static ConfigNode boolean(bool v, SourceLocation where = {});

  Type type() const { return type_; }
  const SourceLocation& location() const { return location_; }
  void set_location(SourceLocation where) { location_ = std::move(where); }

  bool is_table() const { return type_ == Type::Table; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_string() const { return type_ == Type::String; }
  bool is_integer() const { return type_ == Type::Integer; }
  bool is_float() const { return type_ == Type::Float; }
  bool is_boolean() const { return type_ == Type::Boolean; }
  bool is_number() const { return is_integer() || is_float(); }

  const std::string& as_string() const { return string_; }
  std::int64_t as_integer() const { return integer_; }
  // Integers widen to floats; no other coercion exists.
  double as_number() const { return is_integer() ? static_cast<double>(integer_) : float_; }
  bool as_boolean() const { return boolean_; }

  // Tables keep their members in file order.
  const std::vector<ConfigMember>& members() const { return members_; }
  std::vector<ConfigMember>& members() { return members_; }
  const ConfigMember* find_member(std::string_view key) const;
  const ConfigNode* find(std::string_view key) const;
  ConfigNode* find(std::string_view key);
  // Inserts or replaces a member; returns the stored node.
  ConfigNode& set(const std::string& key, ConfigNode value, SourceLocation key_location = {});
  bool erase(std::string_view key);

  const std::vector<ConfigNode>& items() const { return items_; }
  std::vector<ConfigNode>& items() { return items_; }
  void push_back(ConfigNode item) { items_.push_back(std::move(item)); }

  // "a table", "an integer", ... for messages.
  static std::string describe_type(Type t);
  std::string describe_type() const { return describe_type(type_); }
  // The value as TOML would spell it (tables inline), for messages and resolved files.
  std::string repr() const;

  bool operator==(const ConfigNode& other) const;  // value equality, locations ignored
  bool operator!=(const ConfigNode& other) const { return !(*this == other); }

 private:
  Type type_ = Type::Table;
  SourceLocation location_;
  std::string string_;
  std::int64_t integer_ = 0;
  double float_ = 0.0;
  bool boolean_ = false;
  std::vector<ConfigMember> members_;
  std::vector<ConfigNode> items_;
};

struct ConfigMember {
  std::string key;
  SourceLocation key_location;
  ConfigNode value;
};

}  // namespace wscsl
