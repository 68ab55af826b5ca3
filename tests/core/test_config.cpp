#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "wscsl/config/toml.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

using namespace wscsl;

namespace {

Diagnostics errors_of(const std::string& text) {
  try {
    parse_toml(text, "x.toml");
  } catch (const ConfigError& e) {
    return e.diagnostics();
  }
  return {};
}

}  // namespace

TEST(Toml, KeepsKeyAndValueLocations) {
  const ConfigNode root = parse_toml("a = 1\n\n[trainer]\nlr = 0.5\nname = \"x\"\n", "p.toml");
  const ConfigMember* a = root.find_member("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->key_location.str(), "p.toml:1:1");
  EXPECT_EQ(a->value.location().str(), "p.toml:1:5");
  const ConfigNode* trainer = root.find("trainer");
  ASSERT_NE(trainer, nullptr);
  EXPECT_EQ(trainer->location().line, 3);
  const ConfigMember* lr = trainer->find_member("lr");
  EXPECT_EQ(lr->key_location.str(), "p.toml:4:1");
  EXPECT_EQ(lr->value.location().str(), "p.toml:4:6");
  EXPECT_TRUE(lr->value.is_float());
  EXPECT_DOUBLE_EQ(lr->value.as_number(), 0.5);
}

TEST(Toml, KeepsMemberOrder) {
  const ConfigNode root = parse_toml("z = 1\na = 2\nm = 3\n", "p.toml");
  ASSERT_EQ(root.members().size(), 3u);
  EXPECT_EQ(root.members()[0].key, "z");
  EXPECT_EQ(root.members()[1].key, "a");
  EXPECT_EQ(root.members()[2].key, "m");
}

TEST(Toml, SyntaxErrorHasPosition) {
  const Diagnostics d = errors_of("a = 1\nb = [1, 2\n");
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_EQ(d.all()[0].where.file, "x.toml");
  EXPECT_GE(d.all()[0].where.line, 2);
}

TEST(Toml, RejectsDeepNestingBeforeParsing) {
  std::string deep = "a = " + std::string(40, '[') + std::string(40, ']') + "\n";
  const Diagnostics d = errors_of(deep);
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_NE(d.all()[0].message.find("nested deeper than 32"), std::string::npos);
  EXPECT_EQ(d.all()[0].where.str(), "x.toml:1:37");
  // Brackets inside strings and comments do not count.
  EXPECT_NO_THROW(
      parse_toml("s = \"" + std::string(50, '[') + "\" # " + std::string(50, '{'), "x.toml"));
}

TEST(Toml, RejectsLongDottedKeysAndHeadersBeforeParsing) {
  std::string parts = "a";
  for (int i = 0; i < 10000; ++i)
    parts += ".a";
  for (const std::string& text : {parts + " = 1\n", "[" + parts + "]\n", "[[" + parts + "]]\n",
                                  "t = { " + parts + " = 1 }\n"}) {
    const Diagnostics d = errors_of(text);
    ASSERT_EQ(d.error_count(), 1u) << text.substr(0, 20);
    EXPECT_NE(d.all()[0].message.find("nested deeper than 32"), std::string::npos);
    EXPECT_EQ(d.all()[0].where.line, 1);
  }
  // Dots in values, and 31 dotted parts, are fine.
  std::string keys = "a";
  for (int i = 0; i < 30; ++i)
    keys += ".a";
  EXPECT_NO_THROW(parse_toml(keys + " = 1\nx = [" + std::string(100, '1') +
                                 ".5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 1.5, 1.5, 1.5, 1.5, "
                                 "1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, "
                                 "1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5]\n",
                             "x.toml"));
}

TEST(Toml, RejectsDates) {
  const Diagnostics d = errors_of("when = 2026-11-21\n");
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_EQ(d.all()[0].where.str(), "x.toml:1:8");
}

TEST(Toml, MissingFileNamesIt) {
  try {
    load_toml_file("/nonexistent/pipeline.toml");
    FAIL() << "expected an error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics().format(), "/nonexistent/pipeline.toml: error: no such file");
  }
}

TEST(Toml, RefusesHugeFiles) {
  const auto path = std::filesystem::temp_directory_path() / "wscsl_huge.toml";
  {
    std::ofstream out(path);
    out << "# " << std::string((1 << 20) + 10, 'x') << "\n";
  }
  EXPECT_THROW(load_toml_file(path), ConfigError);
  std::filesystem::remove(path);
}

TEST(Override, SetsNestedValuesWithTomlTypes) {
  ConfigNode root = parse_toml("[trainer]\nlr = 0.1\n[[losses]]\ntype = \"margin\"\n", "p.toml");
  Diagnostics d;
  apply_override(root, "trainer.lr=0.01", d);
  apply_override(root, "trainer.epochs=3", d);
  apply_override(root, "dataset.type=fashion_crb", d);  // bare word: a string
  apply_override(root, "losses.0.margin=0.5", d);
  apply_override(root, "backbone.sizes=[1, 2]", d);
  ASSERT_FALSE(d.has_errors()) << d.format();
  EXPECT_DOUBLE_EQ(root.find("trainer")->find("lr")->as_number(), 0.01);
  EXPECT_TRUE(root.find("trainer")->find("epochs")->is_integer());
  EXPECT_EQ(root.find("dataset")->find("type")->as_string(), "fashion_crb");
  EXPECT_DOUBLE_EQ(root.find("losses")->items()[0].find("margin")->as_number(), 0.5);
  EXPECT_EQ(root.find("backbone")->find("sizes")->items().size(), 2u);
  EXPECT_EQ(root.find("trainer")->find("lr")->location().file, "--set trainer.lr=0.01");
}

TEST(Override, ReportsBadPaths) {
  ConfigNode root = parse_toml("[trainer]\nlr = 0.1\n[[losses]]\ntype = \"margin\"\n", "p.toml");
  Diagnostics d;
  apply_override(root, "trainer.lr.x=1", d);
  apply_override(root, "losses.3.margin=1", d);
  apply_override(root, "novalue", d);
  ASSERT_EQ(d.error_count(), 3u);
  EXPECT_EQ(d.all()[0].format(),
            "--set trainer.lr.x=1: error: 'trainer.lr' is a float, not a table");
  EXPECT_NE(d.all()[1].message.find("array of 1 element"), std::string::npos);
  EXPECT_NE(d.all()[2].message.find("KEY=VALUE"), std::string::npos);
}

TEST(TomlWriter, RoundTripsTablesAndArraysOfTables) {
  const std::string text =
      "top = \"v\"\n\n[dataset]\ntype = \"fashion_crb\"\nconditions = [\"color\", \"rotation\"]\n"
      "\n[[losses]]\ntype = \"margin\"\nweight = 1.0\n\n[[losses]]\ntype = \"x y\"\n"
      "\n[trainer]\nlr = 0.001\nepochs = 5\nvalidate = true\n";
  const ConfigNode root = parse_toml(text, "p.toml");
  const std::string written = to_toml(root);
  EXPECT_EQ(written, text);
  EXPECT_EQ(parse_toml(written, "again.toml"), root);
}

TEST(TomlWriter, FloatsRoundTripExactly) {
  ConfigNode root = ConfigNode::table();
  root.set("a", ConfigNode::floating(0.1 + 0.2));
  root.set("b", ConfigNode::floating(1e-3));
  root.set("c", ConfigNode::floating(3.0));
  const ConfigNode again = parse_toml(to_toml(root), "w.toml");
  EXPECT_EQ(again.find("a")->as_number(), 0.1 + 0.2);
  EXPECT_EQ(again.find("b")->as_number(), 1e-3);
  EXPECT_TRUE(again.find("c")->is_float());
}

// Findings of the fuzz targets (tests/fuzz), kept as cases: whatever wscsl accepts, it writes back
// as TOML that reads as the same tree.
TEST(TomlWriter, WhatIsAcceptedIsWrittenBackReadably) {
  // A dotted key under a header is written back as one path: the tree, not only the text, is
  // bounded (32 levels).
  std::string deep = "[e]\n";
  for (int i = 0; i < 32; ++i)
    deep += "k.";
  deep += "v = 1\n";
  const Diagnostics d = errors_of(deep);
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_EQ(d.all()[0].where.line, 2);
  EXPECT_EQ(d.all()[0].message, "keys and values nested deeper than 32 levels are not supported");
  // Members in another order are the same table (to_toml writes scalars first).
  const ConfigNode mixed = parse_toml("a.b.c = 2\nz = 2\n", "m.toml");
  EXPECT_EQ(parse_toml(to_toml(mixed), "w.toml"), mixed);

  ConfigNode root = parse_toml("[trainer]\nlr = 0.1\n", "p.toml");
  Diagnostics overrides;
  apply_override(root, "dataset.type=\"fashion\x7f\"", overrides);  // read as a bare string
  apply_override(root, "trainer.note=caf\xc3\xa9", overrides);
  ASSERT_FALSE(overrides.has_errors()) << overrides.format();
  EXPECT_EQ(parse_toml(to_toml(root), "w.toml"), root);
  apply_override(root, "trainer.d\xff=1", overrides);
  std::string long_path = "a";
  for (int i = 0; i < 40; ++i)
    long_path += ".a";
  apply_override(root, long_path + "=1", overrides);
  ASSERT_EQ(overrides.error_count(), 2u);
  EXPECT_EQ(overrides.all()[0].message, "the override is not valid UTF-8 text");
  EXPECT_EQ(overrides.all()[1].message,
            "keys and values nested deeper than 32 levels are not supported");
}

TEST(Text, ValidUtf8) {
  EXPECT_TRUE(valid_utf8("plain ascii"));
  EXPECT_TRUE(valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(valid_utf8("\xff"));
  EXPECT_FALSE(valid_utf8("\xc3"));              // cut short
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}
