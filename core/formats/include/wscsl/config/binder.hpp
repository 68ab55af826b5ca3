// Binding a component's TOML table to its options. A Schema<Options> (schema.hpp) records each
// field as an ErasedField, accessors into an options object whose type the binder never sees, so
// that every rule of binding (unknown keys, types, ranges, facts, only_when, checks, and the
// messages naming file:line:col) lives in the formats library rather than in each plugin.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wscsl/config/diagnostics.hpp"
#include "wscsl/config/field_description.hpp"
#include "wscsl/config/node.hpp"

namespace wscsl {

// Values the host derives while it builds a pipeline ("backbone.embedding_dim",
// "dataset.num_conditions", ...) and injects into the options that ask for them.
class Facts {
 public:
  void set(const std::string& name, ConfigNode value, std::string origin);
  const ConfigNode* find(const std::string& name) const;
  // Who established the fact ("backbone 'convnet' at default.toml:12:1"), for messages.
  std::string origin(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;  // throws Error if absent or not an integer

 private:
  std::map<std::string, std::pair<ConfigNode, std::string>> values_;
};

// How an option written where the other settings make it inert is reported.
enum class Inert { Error, Warning };

// Everything a bind needs besides the table itself.
struct BindScope {
  Diagnostics* diagnostics = nullptr;
  std::string table;                   // "[losses.0]"
  std::string component;               // "loss 'margin'"
  const Facts* facts = nullptr;        // may be null (nothing injected)
  std::vector<std::string> host_keys;  // keys the host consumed (type, weight, ...), skipped here
  // Fields left without a value because their fact is not established ("input_dim from
  // backbone.embedding_dim"): the options must not be used to build a component.
  std::vector<std::string> missing_facts;
  // The table is a run's record (resolved.toml), which wscsl versions before FieldBuilder's
  // only_when wrote with every option: those that are not read are dropped without a word.
  bool recorded = false;
};

// Reports a cross-field problem at the position of one of the fields.
class FieldChecker {
 public:
  FieldChecker(const ConfigNode& table, BindScope& scope) : table_(table), scope_(scope) {}
  void error(const std::string& field, const std::string& message);

 private:
  const ConfigNode& table_;
  BindScope& scope_;
};

namespace schema_detail {

// One field of a schema, its options object passed as void*.
struct ErasedField {
  FieldDescription description;
  bool is_optional = false;        // a std::optional member, which no fact may fill
  std::vector<std::string> forms;  // the accepted forms of a Spelling field
  bool integer_forms = false;      // a Spelling field whose default is a number reads integers too
  // Stores `value` in the options; false when it has the wrong type (or none of the forms).
  std::function<bool(void* options, const ConfigNode& value)> assign;
  // The field's value in the options; nullopt for an unset std::optional.
  std::function<std::optional<ConfigNode>(const void* options)> get;
  std::function<bool(const void* options)> applies;  // null: always read
  Inert inert = Inert::Error;
};

struct ErasedSchema {
  std::string doc;
  std::vector<ErasedField> fields;
  std::vector<std::function<void(const void* options, FieldChecker&)>> checks;
};

SchemaDescription describe(const ErasedSchema& schema);
// Binds `table` strictly into `options` (default-constructed); problems go to scope.diagnostics.
void bind(const ErasedSchema& schema, const ConfigNode& table, BindScope& scope, void* options);
// Every field that the other settings let be read, with its value, in declaration order.
ConfigNode to_config(const ErasedSchema& schema, const void* options);

// Reading an enumeration, whose spellings are `spellings`. A string that spells none of them is
// accepted here and left out (nullopt), for the choice check to report with suggestions; false
// when `node` is not a string (a list of strings).
bool read_choice(const ConfigNode& node, const std::vector<std::string>& spellings,
                 std::optional<std::size_t>& chosen);
bool read_choices(const ConfigNode& node, const std::vector<std::string>& spellings,
                  std::vector<std::size_t>& chosen);
// Reading a value spelled in a syntax of its own: `parse` takes the string `node` holds (or, with
// `integers`, the decimal digits of an integer, for a syntax with a numeric form such as
// `queries = 1000` beside `queries = "all"`) and says whether it has one of the accepted forms;
// false for other nodes.
bool read_spelled(const ConfigNode& node, bool integers,
                  const std::function<bool(const std::string&)>& parse);
// A spelled value as TOML writes it back: an integer where the spelling is one, else a string.
ConfigNode spelled_node(const std::string& spelling);

// A path, or each path of a list, made absolute against the file it was written in.
ConfigNode resolve_path(const ConfigNode& value);

}  // namespace schema_detail
}  // namespace wscsl
