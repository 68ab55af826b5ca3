#include <gtest/gtest.h>

#include <cctype>
#include <optional>

#include "wscsl/config/schema.hpp"
#include "wscsl/config/toml.hpp"

using namespace wscsl;

namespace {

enum class Mode { A, B };
enum class Letter { X, Y, Z };

struct Opts {
  double margin = 0.2;
  std::int64_t count = 3;
  bool flag = false;
  Mode mode = Mode::A;
  std::vector<Letter> names = {Letter::X};
  std::int64_t dim = 0;
  std::int64_t k = 0;
  std::string required_text;
  std::string where = "data";
  std::int64_t pairs = 3;
};

const EnumChoices<Mode>& mode_choices() {
  static const EnumChoices<Mode> choices = {{Mode::A, "a", "the first"},
                                            {Mode::B, "b", "the second"}};
  return choices;
}

Schema<Opts> schema() {
  Schema<Opts> s("test options");
  s.field("margin", &Opts::margin, "a margin").min(0.0);
  s.field("count", &Opts::count, "a count").greater_than(0).max(10);
  s.field("flag", &Opts::flag, "a flag");
  s.field("mode", &Opts::mode, "a mode", mode_choices());
  s.field("names", &Opts::names, "names",
          EnumChoices<Letter>{
              {Letter::X, "x", "ex"}, {Letter::Y, "y", "why"}, {Letter::Z, "z", "zed"}});
  s.field("dim", &Opts::dim, "derived").derived(facts::backbone_embedding_dim);
  s.field("k", &Opts::k, "defaulted").default_from(facts::dataset_num_conditions);
  s.field("required_text", &Opts::required_text, "needed").required();
  s.field("where", &Opts::where, "a path").path();
  s.field("pairs", &Opts::pairs, "pairs").choices({2, 3});
  s.check([](const Opts& o, FieldChecker& c) {
    if (o.flag && o.mode == Mode::B) c.error("mode", "cannot be \"b\" with flag = true");
  });
  return s;
}

Facts both_facts() {
  Facts facts;
  facts.set("backbone.embedding_dim", ConfigNode::integer(64), "backbone 'convnet'");
  facts.set("dataset.num_conditions", ConfigNode::integer(4), "dataset 'fashion_crb'");
  return facts;
}

struct Bound {
  Opts options;
  Diagnostics diagnostics;
  std::vector<std::string> missing_facts;
};

BindScope scope_for(Diagnostics& d, const Facts* facts) {
  BindScope scope;
  scope.diagnostics = &d;
  scope.table = "[thing]";
  scope.component = "thing 'test'";
  scope.facts = facts;
  scope.host_keys = {"type"};
  return scope;
}

Bound bind(const std::string& text, const Facts& facts = both_facts()) {
  Bound b;
  const ConfigNode table = parse_toml(text, "t.toml");
  BindScope scope = scope_for(b.diagnostics, &facts);
  b.options = schema().bind(table, scope);
  b.missing_facts = scope.missing_facts;
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
  EXPECT_EQ(b.options.mode, Mode::A);
  EXPECT_EQ(b.options.names, (std::vector<Letter>{Letter::Y, Letter::Z}));
  EXPECT_EQ(b.options.dim, 64);
  EXPECT_TRUE(b.missing_facts.empty());
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
            "where, pairs");
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
  const Facts facts = both_facts();
  const Bound injected = bind("required_text = \"r\"\n", facts);
  ASSERT_FALSE(injected.diagnostics.has_errors());
  EXPECT_EQ(injected.options.dim, 64);
  EXPECT_EQ(injected.options.k, 4);

  const Bound agreeing = bind("required_text = \"r\"\ndim = 64\nk = 7\n", facts);
  EXPECT_FALSE(agreeing.diagnostics.has_errors());
  EXPECT_EQ(agreeing.options.k, 7);  // default_from facts may be overridden

  const Bound disagreeing = bind("required_text = \"r\"\ndim = 32\n", facts);
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
  const Facts facts = both_facts();
  BindScope scope = scope_for(d, &facts);
  const Opts o = schema().bind(table, scope);
  EXPECT_EQ(o.where, "/some/dir/sub/data");
}

// A list of paths (as [plugins] paths) resolves entry by entry, and writes back absolute, so a
// resolved pipeline copied elsewhere still names the same directories.
TEST(Schema, ResolvesEveryPathOfAListAndWritesThemBackAbsolute) {
  struct Dirs {
    std::vector<std::string> dirs;
  };
  Schema<Dirs> s("dirs");
  s.field("dirs", &Dirs::dirs, "directories").path();
  const ConfigNode table =
      parse_toml("dirs = [\"build\", \"../up\", \"/abs\"]\n", "/some/dir/pipeline.toml");
  Diagnostics d;
  BindScope scope = scope_for(d, nullptr);
  const Dirs bound = s.bind(table, scope);
  ASSERT_FALSE(d.has_errors());
  EXPECT_EQ(bound.dirs, (std::vector<std::string>{"/some/dir/build", "/some/up", "/abs"}));
  const ConfigNode written = s.to_config(bound);
  ASSERT_EQ(written.find("dirs")->items().size(), 3u);
  EXPECT_EQ(written.find("dirs")->items()[1].as_string(), "/some/up");
}

TEST(Schema, AFieldWhoseFactIsMissingIsNamedNotFilled) {
  Facts only_dataset;
  only_dataset.set("dataset.num_conditions", ConfigNode::integer(4), "dataset 'fashion_crb'");
  const Bound b = bind("required_text = \"r\"\n", only_dataset);
  EXPECT_FALSE(b.diagnostics.has_errors());
  EXPECT_EQ(b.missing_facts, (std::vector<std::string>{"dim from backbone.embedding_dim"}));
  // A restated value needs no fact.
  EXPECT_TRUE(bind("required_text = \"r\"\ndim = 8\n", only_dataset).missing_facts.empty());
}

TEST(Schema, FactsOnOptionalFieldsAreAProgrammingError) {
  struct WithOptional {
    std::optional<std::int64_t> dim;
  };
  Schema<WithOptional> s;
  EXPECT_THROW(s.field("dim", &WithOptional::dim, "d").derived(facts::backbone_embedding_dim),
               std::logic_error);
  EXPECT_THROW(s.field("dim", &WithOptional::dim, "d").default_from(facts::dataset_num_conditions),
               std::logic_error);
}

TEST(Schema, EnumerationsAreCheckedAndSpelled) {
  const Bound b = bind("required_text = \"r\"\nmode = \"bb\"\n");
  ASSERT_EQ(b.diagnostics.error_count(), 1u);
  EXPECT_EQ(b.diagnostics.all()[0].format(),
            "t.toml:2:8: error: [thing] 'mode' has no choice \"bb\"\n"
            "    note: did you mean 'b'?\n"
            "    note: valid choices: a, b");
  EXPECT_EQ(bind("required_text = \"r\"\nmode = \"b\"\n").options.mode, Mode::B);
  EXPECT_TRUE(bind("required_text = \"r\"\nmode = 1\n").diagnostics.has_errors());
  EXPECT_EQ(spelling_of(mode_choices(), Mode::B), "b");
}

namespace {

// A value with a syntax of its own: "off", or "level:N".
struct Level {
  bool on = false;
  std::int64_t n = 0;
};
struct WithLevel {
  Level level;
};

Schema<WithLevel> level_schema() {
  Schema<WithLevel> s;
  s.field("level", &WithLevel::level, "a level",
          Spelling<Level>{{"off", "level:N"},
                          [](const std::string& text) -> std::optional<Level> {
                            if (text == "off") return Level{};
                            if (text.rfind("level:", 0) == 0 && text.size() == 7 &&
                                std::isdigit(static_cast<unsigned char>(text[6])))
                              return Level{true, text[6] - '0'};
                            return std::nullopt;
                          },
                          [](const Level& l) {
                            return l.on ? "level:" + std::to_string(l.n) : std::string("off");
                          }});
  return s;
}

std::pair<WithLevel, Diagnostics> bind_level(const std::string& text) {
  Diagnostics d;
  BindScope scope = scope_for(d, nullptr);
  const WithLevel bound = level_schema().bind(parse_toml(text, "t.toml"), scope);
  return {bound, d};
}

}  // namespace

TEST(Schema, SpelledValuesAreParsedWrittenBackAndListTheirForms) {
  const auto [bound, clean] = bind_level("level = \"level:7\"\n");
  ASSERT_FALSE(clean.has_errors()) << clean.format();
  EXPECT_TRUE(bound.level.on);
  EXPECT_EQ(bound.level.n, 7);
  EXPECT_EQ(level_schema().to_config(bound).find("level")->as_string(), "level:7");
  EXPECT_EQ(level_schema().description().fields[0].default_value->repr(), "\"off\"");
  EXPECT_EQ(level_schema().description().fields[0].type_name, "string");

  const auto [unused, bad] = bind_level("level = \"level:x\"\n");
  ASSERT_EQ(bad.error_count(), 1u) << bad.format();
  EXPECT_EQ(bad.all()[0].format(),
            "t.toml:1:9: error: [thing] 'level' must be \"off\" or \"level:N\", got "
            "\"level:x\"");
  const auto [also_unused, wrong_type] = bind_level("level = 3\n");
  ASSERT_EQ(wrong_type.error_count(), 1u);
  EXPECT_EQ(wrong_type.all()[0].message, "[thing] 'level' expects a string, got an integer (3)");
}

TEST(Schema, IntegerChoices) {
  EXPECT_EQ(bind("required_text = \"r\"\npairs = 2\n").options.pairs, 2);
  const Bound b = bind("required_text = \"r\"\npairs = 4\n");
  ASSERT_EQ(b.diagnostics.error_count(), 1u);
  EXPECT_EQ(b.diagnostics.all()[0].message, "[thing] 'pairs' has no choice 4");
  EXPECT_TRUE(bind("required_text = \"r\"\npairs = \"2\"\n").diagnostics.has_errors());
}

TEST(Schema, KnowsTheFactsTheHostEstablishes) {
  EXPECT_TRUE(is_known_fact("backbone.embedding_dim"));
  EXPECT_FALSE(is_known_fact("backbone.embeding_dim"));
  EXPECT_EQ(nearest_fact("backbone.embeding_dim"), "backbone.embedding_dim");
  EXPECT_TRUE(is_known_fact("dataset.text_features"));
  EXPECT_EQ(known_facts().size(), 9u);
}

TEST(Schema, DescribesFieldsAndWritesResolvedValues) {
  const SchemaDescription d = schema().description();
  ASSERT_EQ(d.fields.size(), 10u);
  EXPECT_EQ(d.fields[0].type_name, "float");
  EXPECT_EQ(d.fields[0].default_value->repr(), "0.2");
  EXPECT_EQ(d.fields[1].constraint_text(), "range (0, 10]");
  EXPECT_EQ(d.fields[3].constraint_text(), "one of: a, b");
  EXPECT_EQ(d.fields[3].type_name, "string");
  EXPECT_EQ(d.fields[3].choice_docs, (std::vector<std::string>{"the first", "the second"}));
  EXPECT_EQ(d.fields[3].default_value->repr(), "\"a\"");
  EXPECT_EQ(d.fields[4].type_name, "list of strings");
  EXPECT_EQ(d.fields[4].default_value->repr(), "[\"x\"]");
  EXPECT_EQ(d.fields[5].derived_from, "backbone.embedding_dim");
  EXPECT_TRUE(d.fields[7].required);
  EXPECT_EQ(d.fields[9].constraint_text(), "one of: 2, 3");

  Opts o;
  o.dim = 12;
  o.mode = Mode::B;
  o.names = {Letter::Z, Letter::X};
  const ConfigNode written = schema().to_config(o);
  EXPECT_EQ(written.repr(),
            "{ margin = 0.2, count = 3, flag = false, mode = \"b\", names = [\"z\", \"x\"], "
            "dim = 12, k = 0, required_text = \"\", where = \"data\", pairs = 3 }");
}

namespace {

struct Gated {
  bool gate = false;
  double strength = 0.5;   // read only with gate = true
  std::int64_t level = 1;  // read only with gate = true; a warning where written otherwise
};

Schema<Gated> gated_schema() {
  Schema<Gated> s("options read under a condition");
  s.field("gate", &Gated::gate, "opens the gate");
  const auto open = [](const Gated& g) { return g.gate; };
  s.field("strength", &Gated::strength, "how strong").min(0.0).only_when("gate = true", open);
  s.field("level", &Gated::level, "how high").only_when("gate = true", open, Inert::Warning);
  return s;
}

Diagnostics bind_gated(const std::string& text, Gated* out = nullptr) {
  Diagnostics d;
  BindScope scope;
  scope.diagnostics = &d;
  scope.table = "[g]";
  const Gated bound = gated_schema().bind(parse_toml(text, "g.toml"), scope);
  if (out) *out = bound;
  return d;
}

}  // namespace

TEST(Schema, AnOptionWrittenWhereItIsNotReadIsReportedAtItsValue) {
  const Diagnostics d = bind_gated("strength = 0.7\nlevel = 2\n");
  ASSERT_EQ(d.all().size(), 2u) << d.format();
  EXPECT_EQ(d.error_count(), 1u);
  EXPECT_EQ(d.all()[0].where.str(), "g.toml:1:12");
  EXPECT_EQ(d.all()[0].message,
            "[g] 'strength' = 0.7 has no effect: it is read only with gate = true");
  EXPECT_EQ(d.all()[0].notes, std::vector<std::string>{"remove it, or set gate = true"});
  EXPECT_EQ(d.all()[1].severity, Diagnostic::Severity::Warning);
  EXPECT_EQ(d.all()[1].where.str(), "g.toml:2:9");

  Gated bound;
  EXPECT_TRUE(bind_gated("gate = true\nstrength = 0.7\nlevel = 2\n", &bound).empty());
  EXPECT_EQ(bound.strength, 0.7);
  EXPECT_EQ(bound.level, 2);
  // Left at its default, an option that is not read is no mistake.
  EXPECT_TRUE(bind_gated("gate = false\n").empty());
  // A value that is wrong in itself is reported as such, once.
  const Diagnostics negative = bind_gated("strength = -1.0\n");
  ASSERT_EQ(negative.all().size(), 1u) << negative.format();
  EXPECT_NE(negative.all()[0].message.find("must be in"), std::string::npos);
}

TEST(Schema, ResolvedOptionsHoldOnlyWhatIsReadAndDescribeSaysWhen) {
  Gated closed;
  Gated open;
  open.gate = true;
  const ConfigNode without = gated_schema().to_config(closed);
  EXPECT_NE(without.find("gate"), nullptr);
  EXPECT_EQ(without.find("strength"), nullptr);
  EXPECT_EQ(without.find("level"), nullptr);
  const ConfigNode with = gated_schema().to_config(open);
  EXPECT_EQ(with.find("strength")->as_number(), 0.5);
  const SchemaDescription described = gated_schema().description();
  const FieldDescription* strength = described.find("strength");
  ASSERT_NE(strength, nullptr);
  EXPECT_EQ(strength->applies_when, "gate = true");
  EXPECT_EQ(strength->constraint_text(), "range [0, inf); read only with gate = true");
}
