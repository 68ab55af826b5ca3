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
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "wscsl/config/binder.hpp"
#include "wscsl/config/diagnostics.hpp"
#include "wscsl/config/facts.hpp"
#include "wscsl/config/field_description.hpp"
#include "wscsl/config/node.hpp"
#include "wscsl/config/value_codec.hpp"

namespace wscsl {

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

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

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
    schema_detail::ErasedField& field = erased();
    field.applies = [applies = std::move(applies)](const void* options) {
      return applies(*static_cast<const Options*>(options));
    };
    field.inert = severity;
    return edit([&](FieldDescription& f) { f.applies_when = std::move(condition); });
  }

 private:
  // A field filled from a fact always holds a value when the component is built, so it is a plain
  // value, never std::optional with a fallback.
  void require_plain(const char* what) {
    const schema_detail::ErasedField& field = erased();
    if (field.is_optional)
      throw std::logic_error("option '" + field.description.name + "' uses ." + what +
                             "() but is std::optional; declare it as a plain value");
  }
  schema_detail::ErasedField& erased() { return schema_.erased_.fields[index_]; }
  template <class F>
  FieldBuilder& edit(F&& f) {
    f(erased().description);
    return *this;
  }
  Schema<Options>& schema_;
  std::size_t index_;
};

template <class Options>
class Schema {
 public:
  explicit Schema(std::string doc = {}) { erased_.doc = std::move(doc); }

  template <class T>
  FieldBuilder<Options> field(std::string name, T Options::*member, std::string doc) {
    using namespace schema_detail;
    static_assert(!std::is_enum_v<T>,
                  "an enum option needs its EnumChoices: field(name, member, "
                  "doc, EnumChoices<E>{...})");
    ErasedField f = named(std::move(name), std::move(doc));
    const Options defaults{};
    if constexpr (IsOptional<T>::value) {
      using V = typename T::value_type;
      const ValueCodec* codec = &value_codec(CodecOf<V>{});
      f.is_optional = true;
      f.description.type_name = codec->type_name;
      if (defaults.*member) f.description.default_value = codec->write(&*(defaults.*member));
      f.assign = [member, codec](void* o, const ConfigNode& n) {
        V v{};
        if (!codec->read(n, &v)) return false;
        of(o).*member = std::move(v);
        return true;
      };
      f.get = [member, codec](const void* o) -> std::optional<ConfigNode> {
        const T& value = of(o).*member;
        if (!value) return std::nullopt;
        return codec->write(&*value);
      };
    } else {
      const ValueCodec* codec = &value_codec(CodecOf<T>{});
      f.description.type_name = codec->type_name;
      f.description.default_value = codec->write(&(defaults.*member));
      f.assign = [member, codec](void* o, const ConfigNode& n) {
        return codec->read(n, &(of(o).*member));
      };
      f.get = [member, codec](const void* o) -> std::optional<ConfigNode> {
        return codec->write(&(of(o).*member));
      };
    }
    return add(std::move(f));
  }

  template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
  FieldBuilder<Options> field(std::string name, E Options::*member, std::string doc,
                              EnumChoices<E> choices) {
    using namespace schema_detail;
    ErasedField f = enum_field(std::move(name), std::move(doc), choices);
    f.description.type_name = value_codec(CodecOf<std::string>{}).type_name;
    f.description.default_value = ConfigNode::string(spelling_of(choices, Options{}.*member));
    f.assign = [member, choices, spellings = f.description.choices](void* o, const ConfigNode& n) {
      std::optional<std::size_t> chosen;
      if (!read_choice(n, spellings, chosen)) return false;
      if (chosen) of(o).*member = choices[*chosen].value;
      return true;
    };
    f.get = [member, choices](const void* o) -> std::optional<ConfigNode> {
      return ConfigNode::string(spelling_of(choices, of(o).*member));
    };
    return add(std::move(f));
  }

  template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
  FieldBuilder<Options> field(std::string name, std::vector<E> Options::*member, std::string doc,
                              EnumChoices<E> choices) {
    using namespace schema_detail;
    ErasedField f = enum_field(std::move(name), std::move(doc), choices);
    f.description.type_name = value_codec(CodecOf<std::vector<std::string>>{}).type_name;
    f.description.default_value = spell_all(choices, Options{}.*member);
    f.assign = [member, choices, spellings = f.description.choices](void* o, const ConfigNode& n) {
      std::vector<std::size_t> chosen;
      if (!read_choices(n, spellings, chosen)) return false;
      std::vector<E> values;
      for (std::size_t i : chosen)
        values.push_back(choices[i].value);
      of(o).*member = std::move(values);
      return true;
    };
    f.get = [member, choices](const void* o) -> std::optional<ConfigNode> {
      return spell_all(choices, of(o).*member);
    };
    return add(std::move(f));
  }

  template <class T>
  FieldBuilder<Options> field(std::string name, T Options::*member, std::string doc,
                              Spelling<T> spelling) {
    using namespace schema_detail;
    ErasedField f = named(std::move(name), std::move(doc));
    // A spelling whose default is a number (`queries = 1000`, or "all") reads and writes integers
    // as well as strings.
    const ConfigNode default_value = spelled_node(spelling.spell(Options{}.*member));
    const bool integers = default_value.is_integer();
    f.description.type_name =
        integers ? "integer or string" : value_codec(CodecOf<std::string>{}).type_name;
    f.description.default_value =
        integers ? default_value : ConfigNode::string(spelling.spell(Options{}.*member));
    f.forms = spelling.forms;
    f.integer_forms = integers;
    f.assign = [member, parse = spelling.parse, integers](void* o, const ConfigNode& n) {
      return read_spelled(n, integers, [&](const std::string& text) {
        std::optional<T> value = parse(text);
        if (value) of(o).*member = std::move(*value);
        return value.has_value();
      });
    };
    f.get = [member, spell = spelling.spell, integers](const void* o) -> std::optional<ConfigNode> {
      const std::string text = spell(of(o).*member);
      return integers ? spelled_node(text) : ConfigNode::string(text);
    };
    return add(std::move(f));
  }

  // A check over several fields, run after every field bound cleanly.
  Schema& check(std::function<void(const Options&, FieldChecker&)> rule) {
    erased_.checks.push_back(
        [rule = std::move(rule)](const void* o, FieldChecker& checker) { rule(of(o), checker); });
    return *this;
  }

  SchemaDescription description() const { return schema_detail::describe(erased_); }

  // Binds `table` strictly; problems go to scope.diagnostics. The returned options are only
  // meaningful when no error was added.
  Options bind(const ConfigNode& table, BindScope& scope) const {
    Options options{};
    schema_detail::bind(erased_, table, scope, &options);
    return options;
  }

  // Every field that the other settings let be read, with its current value (defaults included),
  // in declaration order.
  ConfigNode to_config(const Options& options) const {
    return schema_detail::to_config(erased_, &options);
  }

 private:
  friend class FieldBuilder<Options>;
  static Options& of(void* options) { return *static_cast<Options*>(options); }
  static const Options& of(const void* options) { return *static_cast<const Options*>(options); }

  static schema_detail::ErasedField named(std::string name, std::string doc) {
    schema_detail::ErasedField f;
    f.description.name = std::move(name);
    f.description.doc = std::move(doc);
    return f;
  }
  template <class E>
  static schema_detail::ErasedField enum_field(std::string name, std::string doc,
                                               const EnumChoices<E>& choices) {
    schema_detail::ErasedField f = named(std::move(name), std::move(doc));
    for (const EnumChoice<E>& c : choices) {
      f.description.choices.push_back(c.spelling);
      f.description.choice_docs.push_back(c.doc);
    }
    return f;
  }
  template <class E>
  static ConfigNode spell_all(const EnumChoices<E>& choices, const std::vector<E>& values) {
    ConfigNode spelled = ConfigNode::array();
    for (E v : values)
      spelled.push_back(ConfigNode::string(spelling_of(choices, v)));
    return spelled;
  }
  FieldBuilder<Options> add(schema_detail::ErasedField field) {
    erased_.fields.push_back(std::move(field));
    return FieldBuilder<Options>(*this, erased_.fields.size() - 1);
  }

  schema_detail::ErasedSchema erased_;
};

}  // namespace wscsl
