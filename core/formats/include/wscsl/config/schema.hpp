// Typed, documented and strictly validated options for every component.
//
// A component declares a plain options struct (defaults in the member initialisers) and a
// Schema that names each field with its documentation and constraints:
//
//   struct MarginOptions { double margin = 0.2; };
//   static wscsl::Schema<MarginOptions> schema() {
//     wscsl::Schema<MarginOptions> s("Hinge loss on the fused distances.");
//     s.field("margin", &MarginOptions::margin, "Required gap between far and close.").min(0.0);
//     return s;
//   }
//
// An option that is an enumeration is a C++ enum with its spellings, so that code dispatches on it
// with a `switch` the compiler checks:
//
//   enum class Reduction { Sum, Mean };
//   s.field("reduction", &O::reduction, "How terms combine.",
//           wscsl::EnumChoices<Reduction>{{Reduction::Sum, "sum", "add the terms"},
//                                          {Reduction::Mean, "mean", "average the terms"}});
//
// An option with a syntax of its own (a device "cuda:1") is a type of the component's, read and
// written by a Spelling that lists the accepted forms for the error a mistyped value gets.
//
// Binding a TOML table is strict: unknown keys, wrong types, out-of-range values, invalid choices
// and missing required keys are all reported (with file:line:col) and nothing is constructed.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "wscsl/config/diagnostics.hpp"
#include "wscsl/config/facts.hpp"
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
};

struct SchemaDescription {
  std::string doc;
  std::vector<FieldDescription> fields;

  const FieldDescription* find(const std::string& name) const;
  std::vector<std::string> field_names() const;
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

// One value of an enumerated option: the enumerator, its spelling in TOML, and a doc line.
template <class E>
struct EnumChoice {
  E value;
  const char* spelling;
  const char* doc;
};
template <class E>
using EnumChoices = std::vector<EnumChoice<E>>;

// An option written as one string in a syntax of its own ("cuda:1"), held as a type of the
// component's: `parse` reads a spelling (nullopt when it has none of the accepted forms), `spell`
// writes a value back, and `forms` name the accepted forms in messages ("cpu", "cuda:N").
template <class T>
struct Spelling {
  std::vector<std::string> forms;
  std::function<std::optional<T>(const std::string&)> parse;
  std::function<std::string(const T&)> spell;
};

// The TOML spelling of `value` (for messages and resolved files).
template <class E>
std::string spelling_of(const EnumChoices<E>& choices, E value) {
  for (const EnumChoice<E>& c : choices)
    if (c.value == value) return c.spelling;
  return "?";
}

namespace schema_detail {

// Non-template helpers (core library) so that every plugin reports the same way.
bool check_constraints(const FieldDescription& field, const ConfigNode& value, BindScope& scope);
void report_unknown_key(const SchemaDescription& schema, const ConfigMember& member,
                        BindScope& scope);
void report_wrong_type(const FieldDescription& field, const ConfigNode& value, BindScope& scope);
void report_unaccepted_form(const FieldDescription& field, const std::vector<std::string>& forms,
                            const ConfigNode& value, BindScope& scope);
void report_missing(const FieldDescription& field, const ConfigNode& table, BindScope& scope);
// An option written where the other settings make it inert (FieldBuilder::only_when).
void report_inert(const FieldDescription& field, const ConfigNode& value, Inert severity,
                  BindScope& scope);
void report_disagreement(const FieldDescription& field, const ConfigNode& value,
                         const ConfigNode& fact, BindScope& scope);
ConfigNode resolve_path(const ConfigNode& value);
bool is_host_key(const BindScope& scope, const std::string& key);

template <class T, class = void>
struct ValueTraits;

template <>
struct ValueTraits<bool> {
  static std::string name() { return "boolean"; }
  static bool parse(const ConfigNode& n, bool& out) {
    if (!n.is_boolean()) return false;
    out = n.as_boolean();
    return true;
  }
  static ConfigNode node(bool v) { return ConfigNode::boolean(v); }
};

template <class T>
struct ValueTraits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static std::string name() { return "integer"; }
  static bool parse(const ConfigNode& n, T& out) {
    if (!n.is_integer()) return false;
    const std::int64_t v = n.as_integer();
    if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min())) return false;
    if (static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()) &&
        v >= 0)
      return false;
    out = static_cast<T>(v);
    return true;
  }
  static ConfigNode node(T v) { return ConfigNode::integer(static_cast<std::int64_t>(v)); }
};

template <>
struct ValueTraits<double> {
  static std::string name() { return "float"; }
  static bool parse(const ConfigNode& n, double& out) {
    if (!n.is_number()) return false;
    out = n.as_number();
    return true;
  }
  static ConfigNode node(double v) { return ConfigNode::floating(v); }
};

template <>
struct ValueTraits<std::string> {
  static std::string name() { return "string"; }
  static bool parse(const ConfigNode& n, std::string& out) {
    if (!n.is_string()) return false;
    out = n.as_string();
    return true;
  }
  static ConfigNode node(const std::string& v) { return ConfigNode::string(v); }
};

template <class T>
struct ValueTraits<std::vector<T>> {
  static std::string name() {
    const std::string inner = ValueTraits<T>::name();
    return "list of " + (inner == "boolean" ? std::string("booleans") : inner + "s");
  }
  static bool parse(const ConfigNode& n, std::vector<T>& out) {
    if (!n.is_array()) return false;
    std::vector<T> parsed;
    parsed.reserve(n.items().size());
    for (const ConfigNode& item : n.items()) {
      T v{};
      if (!ValueTraits<T>::parse(item, v)) return false;
      parsed.push_back(std::move(v));
    }
    out = std::move(parsed);
    return true;
  }
  static ConfigNode node(const std::vector<T>& v) {
    ConfigNode a = ConfigNode::array();
    for (const T& item : v)
      a.push_back(ValueTraits<T>::node(item));
    return a;
  }
};

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {
  using value_type = T;
};

}  // namespace schema_detail

template <class Options>
class Schema;

// Returned by Schema::field() to attach constraints: s.field(...).min(0).max(1);
template <class Options>
class FieldBuilder {
 public:
  FieldBuilder(Schema<Options>& schema, std::size_t index) : schema_(schema), index_(index) {}
  FieldBuilder& min(double v) {
    return edit([&](FieldDescription& f) { f.min = v; });
  }
  FieldBuilder& max(double v) {
    return edit([&](FieldDescription& f) { f.max = v; });
  }
  FieldBuilder& greater_than(double v) {
    return edit([&](FieldDescription& f) { f.min = v, f.min_exclusive = true; });
  }
  FieldBuilder& less_than(double v) {
    return edit([&](FieldDescription& f) { f.max = v, f.max_exclusive = true; });
  }
  // The allowed values of an integer option (string options that choose are enumerations).
  // (An initializer list, so that a list of strings cannot convert to it as an iterator pair.)
  FieldBuilder& choices(std::initializer_list<std::int64_t> values) {
    return edit([&](FieldDescription& f) {
      f.choices.clear();
      for (std::int64_t v : values)
        f.choices.push_back(std::to_string(v));
    });
  }
  FieldBuilder& required() {
    return edit([&](FieldDescription& f) { f.required = true, f.default_value.reset(); });
  }
  // The host injects `fact`; a value written in the table must agree with it.
  FieldBuilder& derived(const Fact& fact) {
    require_plain("derived");
    return edit([&](FieldDescription& f) { f.derived_from = fact.name; });
  }
  // The host's `fact` is the default; a value written in the table overrides it.
  FieldBuilder& default_from(const Fact& fact) {
    require_plain("default_from");
    return edit([&](FieldDescription& f) { f.default_from = fact.name; });
  }
  FieldBuilder& path() {
    return edit([&](FieldDescription& f) { f.is_path = true; });
  }
  // The option is read only when `applies` holds, which `condition` states in the pipeline's
  // words ("optimizer = \"sgd\""). Written otherwise it is an error at its line, or a warning
  // where a common default makes it inert (Inert::Warning).
  FieldBuilder& only_when(std::string condition, std::function<bool(const Options&)> applies,
                          Inert severity = Inert::Error) {
    auto& field = schema_.fields_[index_];
    field.applies = std::move(applies);
    field.inert = severity;
    return edit([&](FieldDescription& f) { f.applies_when = std::move(condition); });
  }

 private:
  // A field filled from a fact always holds a value when the component is built, so it is a plain
  // value, never std::optional with a fallback.
  void require_plain(const char* what) const {
    const auto& field = schema_.fields_[index_];
    if (field.is_optional)
      throw std::logic_error("option '" + field.description.name + "' uses ." + what +
                             "() but is std::optional; declare it as a plain value");
  }
  template <class F>
  FieldBuilder& edit(F&& f) {
    f(schema_.fields_[index_].description);
    return *this;
  }
  Schema<Options>& schema_;
  std::size_t index_;
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

template <class Options>
class Schema {
 public:
  explicit Schema(std::string doc = {}) { description_.doc = std::move(doc); }

  template <class T>
  FieldBuilder<Options> field(std::string name, T Options::*member, std::string doc) {
    using namespace schema_detail;
    static_assert(!std::is_enum_v<T>,
                  "an enum option needs its EnumChoices: field(name, member, "
                  "doc, EnumChoices<E>{...})");
    Field f;
    f.description.name = std::move(name);
    f.description.doc = std::move(doc);
    const Options defaults{};
    if constexpr (IsOptional<T>::value) {
      f.is_optional = true;
      using V = typename IsOptional<T>::value_type;
      f.description.type_name = ValueTraits<V>::name();
      if (defaults.*member) f.description.default_value = ValueTraits<V>::node(*(defaults.*member));
      f.assign = [member](Options& o, const ConfigNode& n) {
        V v{};
        if (!ValueTraits<V>::parse(n, v)) return false;
        o.*member = std::move(v);
        return true;
      };
      f.get = [member](const Options& o) -> std::optional<ConfigNode> {
        if (!(o.*member)) return std::nullopt;
        return ValueTraits<V>::node(*(o.*member));
      };
    } else {
      f.description.type_name = ValueTraits<T>::name();
      f.description.default_value = ValueTraits<T>::node(defaults.*member);
      f.assign = [member](Options& o, const ConfigNode& n) {
        return ValueTraits<T>::parse(n, o.*member);
      };
      f.get = [member](const Options& o) -> std::optional<ConfigNode> {
        return ValueTraits<T>::node(o.*member);
      };
    }
    fields_.push_back(std::move(f));
    return FieldBuilder<Options>(*this, fields_.size() - 1);
  }

  template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
  FieldBuilder<Options> field(std::string name, E Options::*member, std::string doc,
                              EnumChoices<E> choices) {
    Field f = enum_field(std::move(name), std::move(doc), choices);
    f.description.type_name = "string";
    f.description.default_value = ConfigNode::string(spelling_of(choices, Options{}.*member));
    f.assign = [member, choices](Options& o, const ConfigNode& n) {
      if (!n.is_string()) return false;
      // An unknown spelling is reported by the choices check with suggestions.
      parse_enum(choices, n.as_string(), o.*member);
      return true;
    };
    f.get = [member, choices](const Options& o) -> std::optional<ConfigNode> {
      return ConfigNode::string(spelling_of(choices, o.*member));
    };
    fields_.push_back(std::move(f));
    return FieldBuilder<Options>(*this, fields_.size() - 1);
  }

  template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
  FieldBuilder<Options> field(std::string name, std::vector<E> Options::*member, std::string doc,
                              EnumChoices<E> choices) {
    Field f = enum_field(std::move(name), std::move(doc), choices);
    f.description.type_name = "list of strings";
    const Options defaults{};
    ConfigNode spelled = ConfigNode::array();
    for (E v : defaults.*member)
      spelled.push_back(ConfigNode::string(spelling_of(choices, v)));
    f.description.default_value = std::move(spelled);
    f.assign = [member, choices](Options& o, const ConfigNode& n) {
      if (!n.is_array()) return false;
      std::vector<E> parsed;
      for (const ConfigNode& item : n.items()) {
        if (!item.is_string()) return false;
        E v{};
        if (parse_enum(choices, item.as_string(), v)) parsed.push_back(v);
      }
      o.*member = std::move(parsed);
      return true;
    };
    f.get = [member, choices](const Options& o) -> std::optional<ConfigNode> {
      ConfigNode a = ConfigNode::array();
      for (E v : o.*member)
        a.push_back(ConfigNode::string(spelling_of(choices, v)));
      return a;
    };
    fields_.push_back(std::move(f));
    return FieldBuilder<Options>(*this, fields_.size() - 1);
  }

  template <class T>
  FieldBuilder<Options> field(std::string name, T Options::*member, std::string doc,
                              Spelling<T> spelling) {
    Field f;
    f.description.name = std::move(name);
    f.description.doc = std::move(doc);
    f.description.type_name = "string";
    f.description.default_value = ConfigNode::string(spelling.spell(Options{}.*member));
    f.forms = spelling.forms;
    f.assign = [member, parse = spelling.parse](Options& o, const ConfigNode& n) {
      if (!n.is_string()) return false;
      std::optional<T> value = parse(n.as_string());
      if (!value) return false;
      o.*member = std::move(*value);
      return true;
    };
    f.get = [member, spell = spelling.spell](const Options& o) -> std::optional<ConfigNode> {
      return ConfigNode::string(spell(o.*member));
    };
    fields_.push_back(std::move(f));
    return FieldBuilder<Options>(*this, fields_.size() - 1);
  }

  // A check over several fields, run after every field bound cleanly.
  Schema& check(std::function<void(const Options&, FieldChecker&)> rule) {
    checks_.push_back(std::move(rule));
    return *this;
  }

  SchemaDescription description() const {
    SchemaDescription d;
    d.doc = description_.doc;
    for (const Field& f : fields_)
      d.fields.push_back(f.description);
    return d;
  }

  // Binds `table` strictly; problems go to scope.diagnostics. The returned options are only
  // meaningful when no error was added.
  Options bind(const ConfigNode& table, BindScope& scope) const {
    using namespace schema_detail;
    Options options{};
    const std::size_t errors_before = scope.diagnostics->error_count();
    const SchemaDescription described = description();
    std::vector<bool> seen(fields_.size(), false);
    for (const ConfigMember& member : table.members()) {
      if (is_host_key(scope, member.key)) continue;
      const std::size_t i = index_of(member.key);
      if (i == fields_.size()) {
        report_unknown_key(described, member, scope);
        continue;
      }
      seen[i] = true;
      const Field& f = fields_[i];
      const ConfigNode value = f.description.is_path ? resolve_path(member.value) : member.value;
      if (!f.assign(options, value)) {
        if (!f.forms.empty() && member.value.is_string())
          report_unaccepted_form(f.description, f.forms, member.value, scope);
        else
          report_wrong_type(f.description, member.value, scope);
        continue;
      }
      if (!check_constraints(f.description, member.value, scope)) continue;
      if (!f.description.derived_from.empty() && scope.facts) {
        if (const ConfigNode* fact = scope.facts->find(f.description.derived_from)) {
          if (*fact != value) report_disagreement(f.description, member.value, *fact, scope);
        }
      }
    }
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      if (seen[i]) continue;
      const FieldDescription& d = fields_[i].description;
      const std::string& fact_name = !d.derived_from.empty() ? d.derived_from : d.default_from;
      const ConfigNode* fact =
          (!fact_name.empty() && scope.facts) ? scope.facts->find(fact_name) : nullptr;
      if (fact) {
        fields_[i].assign(options, *fact);
      } else if (!fact_name.empty()) {
        scope.missing_facts.push_back(d.name + " from " + fact_name);
      } else if (d.required) {
        report_missing(d, table, scope);
      }
    }
    if (scope.diagnostics->error_count() == errors_before && scope.missing_facts.empty()) {
      FieldChecker checker(table, scope);
      for (const auto& rule : checks_)
        rule(options, checker);
      for (std::size_t i = 0; i < fields_.size(); ++i)
        if (seen[i] && !fields_[i].read_by(options) && !scope.recorded)
          report_inert(fields_[i].description,
                       table.find_member(fields_[i].description.name)->value, fields_[i].inert,
                       scope);
    }
    return options;
  }

  // Every field that the other settings let be read, with its current value (defaults included),
  // in declaration order.
  ConfigNode to_config(const Options& options) const {
    ConfigNode table = ConfigNode::table();
    for (const Field& f : fields_) {
      if (!f.read_by(options)) continue;
      if (auto v = f.get(options)) table.set(f.description.name, std::move(*v));
    }
    return table;
  }

 private:
  friend class FieldBuilder<Options>;
  struct Field {
    FieldDescription description;
    bool is_optional = false;
    std::vector<std::string> forms;  // the accepted forms of a Spelling field
    std::function<bool(Options&, const ConfigNode&)> assign;
    std::function<std::optional<ConfigNode>(const Options&)> get;
    std::function<bool(const Options&)> applies;  // null: always read
    Inert inert = Inert::Error;
    bool read_by(const Options& o) const { return !applies || applies(o); }
  };
  template <class E>
  static Field enum_field(std::string name, std::string doc, const EnumChoices<E>& choices) {
    Field f;
    f.description.name = std::move(name);
    f.description.doc = std::move(doc);
    for (const EnumChoice<E>& c : choices) {
      f.description.choices.push_back(c.spelling);
      f.description.choice_docs.push_back(c.doc);
    }
    return f;
  }
  template <class E>
  static bool parse_enum(const EnumChoices<E>& choices, const std::string& spelled, E& out) {
    for (const EnumChoice<E>& c : choices)
      if (spelled == c.spelling) {
        out = c.value;
        return true;
      }
    return false;
  }

  std::size_t index_of(const std::string& name) const {
    for (std::size_t i = 0; i < fields_.size(); ++i)
      if (fields_[i].description.name == name) return i;
    return fields_.size();
  }

  SchemaDescription description_;
  std::vector<Field> fields_;
  std::vector<std::function<void(const Options&, FieldChecker&)>> checks_;
};

}  // namespace wscsl
