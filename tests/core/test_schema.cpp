#include <gtest/gtest.h>

#include <optional>

#include "wscsl/config/schema.hpp"
#include "wscsl/config/toml.hpp"

using namespace wscsl;

namespace {

struct Opts {
  double margin = 0.2;
  std::int64_t count = 3;
  bool flag = false;
  std::string mode = "a";
  std::vector<std::string> names = {"x"};
  std::optional<std::int64_t> dim;
  std::optional<std::int64_t> k;
  std::string required_text;
  std::string where = "data";
};

Schema<Opts> schema() {
  Schema<Opts> s("test options");
  s.field("margin", &Opts::margin, "a margin").min(0.0);
  s.field("count", &Opts::count, "a count").greater_than(0).max(10);
  s.field("flag", &Opts::flag, "a flag");
  s.field("mode", &Opts::mode, "a mode").choices({"a", "b"});
  s.field("names", &Opts::names, "names").choices({"x", "y", "z"});
  s.field("dim", &Opts::dim, "derived").derived("backbone.embedding_dim");
  s.field("k", &Opts::k, "defaulted").default_from("dataset.num_conditions");
  s.field("required_text", &Opts::required_text, "needed").required();
  s.field("where", &Opts::where, "a path").path();
  s.check([](const Opts& o, FieldChecker& c) {
    if (o.flag && o.mode == "b") c.error("mode", "cannot be \"b\" with flag = true");
  });
  return s;
}

struct Bound {
  Opts options;
  Diagnostics diagnostics;
};

Bound bind(const std::string& text, const Facts* facts = nullptr) {
  Bound b;
  const ConfigNode table = parse_toml(text, "t.toml");
  BindScope scope{&b.diagnostics, "[thing]", "thing 'test'", facts, {"type"}};
  b.options = schema().bind(table, scope);
  return b;
}

}  // namespace

TEST(Schema, BindsValuesAndKeepsDefaults) {
  const Bound b = bind(
      "type = \"t\"\nrequired_text = \"r\"\nmargin = 1\ncount = 4\n"
      "names = [\"y\", \"z\"]\n");
  ASSERT_FALSE(b.diagnostics.has_errors()) << b.diagnostics.format();
  EXPECT_DOUBLE_EQ(b.options.margin, 1.0);  // an integer widens to a float
  EXPECT_EQ(b.options.count, 4);
  EXPECT_EQ(b.options.mode, "a");
  EXPECT_EQ(b.options.names, (std::vector<std::string>{"y", "z"}));
  EXPECT_FALSE(b.options.dim.has_value());
}

TEST(Schema, ReportsEveryProblemWithPosition) {
  const Bound b = bind(
      "margn = 0.3\n"             // unknown key
      "count = \"many\"\n"        // wrong type
      "margin = -1.0\n"           // out of range
      "mode = \"c\"\n"            // not a choice
      "names = [\"x\", \"w\"]\n"  // a list element not a choice
      "flag = 1\n");              // integer is not a boolean
  EXPECT_EQ(b.diagnostics.error_count(), 7u) << b.diagnostics.format();
  const auto& d = b.diagnostics.all();
  EXPECT_EQ(d[0].format(),
            "t.toml:1:1: error: unknown key 'margn' in [thing] (thing 'test')\n"
            "    note: did you mean 'margin'?\n"
            "    note: valid keys: type, margin, count, flag, mode, names, dim, k, required_text, "
            "where");
  EXPECT_EQ(d[1].format(),
            "t.toml:2:9: error: [thing] 'count' expects an integer, got a string "
            "(\"many\")");
  EXPECT_EQ(d[2].format(), "t.toml:3:10: error: [thing] 'margin' must be in [0, inf), got -1.0");
  EXPECT_EQ(d[3].where.str(), "t.toml:4:8");
  EXPECT_EQ(d[3].message, "[thing] 'mode' has no choice \"c\"");
  EXPECT_EQ(d[4].where.str(), "t.toml:5:15");
  EXPECT_EQ(d[5].where.str(), "t.toml:6:8");
  EXPECT_EQ(d[6].format(),
            "t.toml:1:1: error: [thing] is missing required key 'required_text' "
            "(string: needed)");
}

TEST(Schema, ExclusiveBoundsAreExclusive) {
  EXPECT_TRUE(bind("required_text = \"r\"\ncount = 0\n").diagnostics.has_errors());
  EXPECT_FALSE(bind("required_text = \"r\"\ncount = 10\n").diagnostics.has_errors());
  EXPECT_TRUE(bind("required_text = \"r\"\ncount = 11\n").diagnostics.has_errors());
}

TEST(Schema, CrossFieldChecksReportAtTheField) {
  const Bound b = bind("required_text = \"r\"\nflag = true\nmode = \"b\"\n");
  ASSERT_EQ(b.diagnostics.error_count(), 1u);
  EXPECT_EQ(b.diagnostics.all()[0].format(),
            "t.toml:3:8: error: [thing] 'mode': cannot be \"b\" with flag = true");
}

TEST(Schema, InjectsFactsAndChecksRestatedOnes) {
  Facts facts;
  facts.set("backbone.embedding_dim", ConfigNode::integer(64), "backbone 'convnet'");
  facts.set("dataset.num_conditions", ConfigNode::integer(4), "dataset 'fashion_crb'");
  const Bound injected = bind("required_text = \"r\"\n", &facts);
  ASSERT_FALSE(injected.diagnostics.has_errors());
  EXPECT_EQ(injected.options.dim, 64);
  EXPECT_EQ(injected.options.k, 4);

  const Bound agreeing = bind("required_text = \"r\"\ndim = 64\nk = 7\n", &facts);
  EXPECT_FALSE(agreeing.diagnostics.has_errors());
  EXPECT_EQ(agreeing.options.k, 7);  // default_from facts may be overridden

  const Bound disagreeing = bind("required_text = \"r\"\ndim = 32\n", &facts);
  ASSERT_EQ(disagreeing.diagnostics.error_count(), 1u);
  EXPECT_EQ(disagreeing.diagnostics.all()[0].where.str(), "t.toml:2:7");
  EXPECT_NE(disagreeing.diagnostics.all()[0].message.find(
                "disagrees with backbone.embedding_dim = 64 (from backbone 'convnet')"),
            std::string::npos);
}

TEST(Schema, ResolvesPathsAgainstTheirFile) {
  const ConfigNode table =
      parse_toml("required_text = \"r\"\nwhere = \"sub/data\"\n", "/some/dir/pipeline.toml");
  Diagnostics d;
  BindScope scope{&d, "[thing]", "", nullptr, {}};
  const Opts o = schema().bind(table, scope);
  EXPECT_EQ(o.where, "/some/dir/sub/data");
}

TEST(Schema, DescribesFieldsAndWritesResolvedValues) {
  const SchemaDescription d = schema().description();
  ASSERT_EQ(d.fields.size(), 9u);
  EXPECT_EQ(d.fields[0].type_name, "float");
  EXPECT_EQ(d.fields[0].default_value->repr(), "0.2");
  EXPECT_EQ(d.fields[1].constraint_text(), "range (0, 10]");
  EXPECT_EQ(d.fields[3].constraint_text(), "one of: a, b");
  EXPECT_EQ(d.fields[4].type_name, "list of strings");
  EXPECT_FALSE(d.fields[5].default_value.has_value());
  EXPECT_TRUE(d.fields[7].required);

  Opts o;
  o.dim = 12;
  const ConfigNode written = schema().to_config(o);
  EXPECT_EQ(written.repr(),
            "{ margin = 0.2, count = 3, flag = false, mode = \"a\", names = [\"x\"], dim = 12, "
            "required_text = \"\", where = \"data\" }");
}
