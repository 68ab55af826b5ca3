// The formats library's binder on its own: type-erased fields as a Schema records them, and the
// value codecs that convert every option.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "wscsl/config/binder.hpp"
#include "wscsl/config/toml.hpp"
#include "wscsl/config/value_codec.hpp"

using namespace wscsl;
using namespace wscsl::schema_detail;

namespace {

template <class T>
bool read_as(const std::string& toml, T& out) {
  const ConfigNode table = parse_toml("v = " + toml + "\n", "v.toml");
  return value_codec(CodecOf<T>{}).read(*table.find("v"), &out);
}

// Two integers held in a plain struct the binder sees only as void*.
struct Pair {
  std::int64_t a = 1;
  std::int64_t b = 2;
};

ErasedField integer_field(const std::string& name, std::int64_t Pair::*member) {
  const ValueCodec* codec = &value_codec(CodecOf<std::int64_t>{});
  ErasedField f;
  f.description.name = name;
  f.description.type_name = codec->type_name;
  f.assign = [codec, member](void* o, const ConfigNode& n) {
    return codec->read(n, &(static_cast<Pair*>(o)->*member));
  };
  f.get = [codec, member](const void* o) -> std::optional<ConfigNode> {
    return codec->write(&(static_cast<const Pair*>(o)->*member));
  };
  return f;
}

// `b` is read only when a > 0.
ErasedSchema pair_schema() {
  ErasedSchema s;
  s.fields.push_back(integer_field("a", &Pair::a));
  s.fields.push_back(integer_field("b", &Pair::b));
  s.fields[1].description.applies_when = "a > 0";
  s.fields[1].applies = [](const void* o) { return static_cast<const Pair*>(o)->a > 0; };
  s.checks.push_back([](const void* o, FieldChecker& c) {
    if (static_cast<const Pair*>(o)->a == 7) c.error("a", "must not be 7");
  });
  return s;
}

struct Bound {
  Pair pair;
  Diagnostics diagnostics;
};

Bound bind_pair(const std::string& text, bool recorded = false) {
  Bound b;
  BindScope scope;
  scope.diagnostics = &b.diagnostics;
  scope.table = "[pair]";
  scope.host_keys = {"type"};
  scope.recorded = recorded;
  bind(pair_schema(), parse_toml(text, "p.toml"), scope, &b.pair);
  return b;
}

}  // namespace

TEST(ValueCodec, AnIntegerMustFitItsType) {
  std::int32_t narrow = 5;
  EXPECT_FALSE(read_as("4294967296", narrow));
  EXPECT_FALSE(read_as("-2147483649", narrow));
  EXPECT_EQ(narrow, 5);
  EXPECT_TRUE(read_as("-2147483648", narrow));
  EXPECT_EQ(narrow, std::numeric_limits<std::int32_t>::min());
  unsigned positive = 3;
  EXPECT_FALSE(read_as("-1", positive));
  EXPECT_TRUE(read_as("9", positive));
  EXPECT_EQ(positive, 9u);
  std::uint64_t wide = 0;
  EXPECT_TRUE(read_as("9223372036854775807", wide));
  EXPECT_EQ(wide, 9223372036854775807u);
}

TEST(ValueCodec, IntegersWidenToFloatsAndNothingElseConverts) {
  double x = 0;
  EXPECT_TRUE(read_as("3", x));
  EXPECT_EQ(x, 3.0);
  std::int64_t n = 0;
  EXPECT_FALSE(read_as("3.0", n));
  bool flag = false;
  EXPECT_FALSE(read_as("1", flag));
  std::string text;
  EXPECT_FALSE(read_as("1", text));
}

TEST(ValueCodec, AListIsReadWholeOrNotAtAll) {
  std::vector<int> values = {9};
  EXPECT_FALSE(read_as("[1, \"two\", 3]", values));
  EXPECT_EQ(values, std::vector<int>{9});
  EXPECT_TRUE(read_as("[1, 2, 3]", values));
  EXPECT_EQ(values, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(value_codec(CodecOf<std::vector<int>>{}).write(&values).repr(), "[1, 2, 3]");
}

TEST(ValueCodec, NamesEachType) {
  EXPECT_EQ(value_codec(CodecOf<bool>{}).type_name, "boolean");
  EXPECT_EQ(value_codec(CodecOf<short>{}).type_name, "integer");
  EXPECT_EQ(value_codec(CodecOf<double>{}).type_name, "float");
  EXPECT_EQ(value_codec(CodecOf<std::vector<bool>>{}).type_name, "list of booleans");
  EXPECT_EQ(value_codec(CodecOf<std::vector<double>>{}).type_name, "list of floats");
  EXPECT_EQ(value_codec(CodecOf<std::vector<std::string>>{}).type_name, "list of strings");
}

TEST(Binder, BindsThroughTheErasedAccessorsAndSkipsHostKeys) {
  const Bound b = bind_pair("type = \"t\"\na = 3\nb = 4\n");
  ASSERT_TRUE(b.diagnostics.empty()) << b.diagnostics.format();
  EXPECT_EQ(b.pair.a, 3);
  EXPECT_EQ(b.pair.b, 4);
}

TEST(Binder, NamesHostKeysFirstAmongTheValidKeys) {
  const Bound b = bind_pair("c = 1\n");
  ASSERT_EQ(b.diagnostics.all().size(), 1u);
  EXPECT_EQ(b.diagnostics.all()[0].format(),
            "p.toml:1:1: error: unknown key 'c' in [pair]\n"
            "    note: did you mean 'a'?\n"
            "    note: valid keys: type, a, b");
}

TEST(Binder, ChecksRunOnlyOnCleanlyBoundOptions) {
  const Bound checked = bind_pair("a = 7\n");
  ASSERT_EQ(checked.diagnostics.all().size(), 1u);
  EXPECT_EQ(checked.diagnostics.all()[0].format(), "p.toml:1:5: error: [pair] 'a': must not be 7");
  const Bound typed = bind_pair("a = 7\nb = \"x\"\n");
  ASSERT_EQ(typed.diagnostics.all().size(), 1u);
  EXPECT_EQ(typed.diagnostics.all()[0].message,
            "[pair] 'b' expects an integer, got a string (\"x\")");
}

TEST(Binder, AnInertOptionIsReportedUnlessTheTableIsARecord) {
  EXPECT_EQ(bind_pair("a = 0\nb = 4\n").diagnostics.error_count(), 1u);
  EXPECT_TRUE(bind_pair("a = 0\nb = 4\n", true).diagnostics.empty());
  Pair closed;
  closed.a = 0;
  EXPECT_EQ(to_config(pair_schema(), &closed).repr(), "{ a = 0 }");
  const Pair defaults;
  EXPECT_EQ(to_config(pair_schema(), &defaults).repr(), "{ a = 1, b = 2 }");
}

TEST(Binder, ReadsChoicesBySpelling) {
  const std::vector<std::string> spellings = {"sum", "mean"};
  const ConfigNode t = parse_toml("one = \"mean\"\nodd = \"avg\"\nmany = [\"sum\", \"x\"]\n", "c");
  std::optional<std::size_t> chosen;
  EXPECT_TRUE(read_choice(*t.find("one"), spellings, chosen));
  EXPECT_EQ(chosen, std::optional<std::size_t>(1));
  // Accepted, for the choice check to report with suggestions.
  EXPECT_TRUE(read_choice(*t.find("odd"), spellings, chosen));
  EXPECT_FALSE(chosen.has_value());
  EXPECT_FALSE(read_choice(*t.find("many"), spellings, chosen));
  std::vector<std::size_t> several;
  EXPECT_TRUE(read_choices(*t.find("many"), spellings, several));
  EXPECT_EQ(several, std::vector<std::size_t>{0});
  EXPECT_FALSE(read_choices(*t.find("one"), spellings, several));

  const auto accept_all = [](const std::string&) { return true; };
  EXPECT_TRUE(read_spelled(*t.find("one"), false, accept_all));
  EXPECT_FALSE(read_spelled(*t.find("many"), false, accept_all));
  // An integer is read as its decimal digits only where the field takes integers.
  const ConfigNode n = parse_toml("count = 1000\n", "n");
  std::string seen;
  const auto record = [&](const std::string& text) {
    seen = text;
    return true;
  };
  EXPECT_FALSE(read_spelled(*n.find("count"), false, record));
  EXPECT_EQ(seen, "");
  EXPECT_TRUE(read_spelled(*n.find("count"), true, record));
  EXPECT_EQ(seen, "1000");
  EXPECT_TRUE(spelled_node("1000").is_integer());
  EXPECT_TRUE(spelled_node("all").is_string());
  EXPECT_TRUE(spelled_node("007").is_string());
}
