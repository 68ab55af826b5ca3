// The TOML front end and schema binding: pipeline text is parsed (with its nesting guard), written
// back with to_toml and parsed again (which must succeed and give the same tree), and its tables
// are bound to a schema with every kind of option.
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "fuzz_target.hpp"
#include "wscsl/config/schema.hpp"
#include "wscsl/config/toml.hpp"

namespace {

enum class Mode { Sum, Mean };

struct Options {
  std::int64_t count = 3;
  double rate = 0.1;
  bool flag = false;
  std::string name = "x";
  std::vector<double> fractions{0.5};
  std::vector<std::string> names;
  std::optional<std::int64_t> limit;
  Mode mode = Mode::Sum;
  std::int64_t size = 0;
};

wscsl::Schema<Options> schema() {
  wscsl::Schema<Options> s("Every kind of option.");
  s.field("count", &Options::count, "A count.").min(1).max(1000);
  s.field("rate", &Options::rate, "A rate.").greater_than(0.0);
  s.field("flag", &Options::flag, "A flag.");
  s.field("name", &Options::name, "A name.");
  s.field("fractions", &Options::fractions, "Fractions.").min(0.0).max(1.0);
  s.field("names", &Options::names, "Names.");
  s.field("limit", &Options::limit, "An optional limit.").min(0);
  s.field("mode", &Options::mode, "A mode.",
          wscsl::EnumChoices<Mode>{{Mode::Sum, "sum", "add"}, {Mode::Mean, "mean", "average"}});
  s.field("size", &Options::size, "A size.").choices({0, 8, 16});
  return s;
}

void bind_tables(const wscsl::ConfigNode& node, const wscsl::Schema<Options>& s,
                 wscsl::Diagnostics& diagnostics) {
  for (const wscsl::ConfigMember& member : node.members()) {
    if (member.value.is_table()) {
      wscsl::BindScope scope;
      scope.diagnostics = &diagnostics;
      scope.table = "[" + member.key + "]";
      scope.component = "fuzz";
      s.bind(member.value, scope);
    }
    if (member.value.is_array())
      for (const wscsl::ConfigNode& item : member.value.items())
        if (item.is_table()) {
          wscsl::BindScope scope;
          scope.diagnostics = &diagnostics;
          scope.table = "[[" + member.key + "]]";
          scope.component = "fuzz";
          s.bind(item, scope);
        }
  }
}

// NaN is not equal to itself, so a tree holding one cannot be compared after the round trip.
bool holds_nan(const wscsl::ConfigNode& node) {
  if (node.is_float() && std::isnan(node.as_number())) return true;
  for (const wscsl::ConfigMember& m : node.members())
    if (holds_nan(m.value)) return true;
  for (const wscsl::ConfigNode& item : node.items())
    if (holds_nan(item)) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const wscsl::Schema<Options> s = schema();
  return fuzz_text(data, size, [](const std::string& text) {
    const wscsl::ConfigNode root = wscsl::parse_toml(text, "fuzz.toml");
    const std::string written = wscsl::to_toml(root);
    wscsl::ConfigNode again;
    try {
      again = wscsl::parse_toml(written, "written.toml");
    } catch (const wscsl::Error& e) {
      throw std::logic_error("to_toml wrote TOML that does not parse: " + std::string(e.what()) +
                             "\n" + written);
    }
    if (!holds_nan(root) && again != root)
      throw std::logic_error("to_toml changed the tree:\n" + written);
    wscsl::Diagnostics diagnostics;
    bind_tables(root, s, diagnostics);
  });
}
