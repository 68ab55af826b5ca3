// The only translation unit that includes TOML++.
#include "wscsl/config/toml.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl {
namespace {

constexpr std::size_t kMaxFileBytes = 1 << 20;
constexpr int kMaxNesting = 32;

SourceLocation location_of(const toml::source_region& region, const std::string& origin) {
  return SourceLocation{origin, static_cast<int>(region.begin.line),
                        static_cast<int>(region.begin.column)};
}

[[noreturn]] void fail(SourceLocation where, std::string message) {
  Diagnostics d;
  d.error(std::move(where), std::move(message));
  throw ConfigError(std::move(d));
}

std::string too_deep_message() {
  return fmt::format("keys and values nested deeper than {} levels are not supported", kMaxNesting);
}

// TOML++ 3.3 recurses once per nesting level — per bracket or brace, and per part of a dotted key
// or table header ([a.b.c], a.b.c = 1) — so absurd nesting is rejected before it can overflow the
// stack (toml++ issues #292, PR #242). A key is read at the start of a line, in a table header and
// after `{` or `,` in an inline table; elsewhere a dot belongs to a value (1.5, a date).
void check_nesting(const std::string& text, const std::string& origin) {
  int line = 1, column = 0;
  enum class Open { Header, Array, InlineTable };
  std::vector<Open> open;  // the brackets and braces around this point
  bool in_key = true;      // reading a key, not a value
  std::size_t key_parts = 1;
  enum class State {
    Normal,
    Comment,
    Basic,
    Literal,
    MultiBasic,
    MultiLiteral
  } state = State::Normal;
  const auto check = [&] {
    if (open.size() + key_parts - 1 > static_cast<std::size_t>(kMaxNesting))
      fail({origin, line, column}, too_deep_message());
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      ++line, column = 0, key_parts = 1;
      in_key = open.empty();
    }
    auto starts = [&](const char* s) { return text.compare(i, std::strlen(s), s) == 0; };
    switch (state) {
      case State::Comment:
        if (c == '\n') state = State::Normal;
        break;
      case State::Basic:
        if (c == '\\')
          ++i, ++column;
        else if (c == '"' || c == '\n')
          state = State::Normal;
        break;
      case State::Literal:
        if (c == '\'' || c == '\n') state = State::Normal;
        break;
      case State::MultiBasic:
        if (c == '\\')
          ++i, ++column;
        else if (starts("\"\"\""))
          state = State::Normal, i += 2, column += 2;
        break;
      case State::MultiLiteral:
        if (starts("\'\'\'")) state = State::Normal, i += 2, column += 2;
        break;
      case State::Normal:
        if (c == '#') {
          state = State::Comment;
        } else if (starts("\"\"\"")) {
          state = State::MultiBasic, i += 2, column += 2;
        } else if (starts("\'\'\'")) {
          state = State::MultiLiteral, i += 2, column += 2;
        } else if (c == '"') {
          state = State::Basic;
        } else if (c == '\'') {
          state = State::Literal;
        } else if (c == '[') {
          const bool header = in_key && (open.empty() || open.back() == Open::Header);
          open.push_back(header ? Open::Header : Open::Array);
          in_key = header;
          check();
        } else if (c == '{') {
          open.push_back(Open::InlineTable);
          in_key = true, key_parts = 1;
          check();
        } else if (c == ']' || c == '}') {
          if (!open.empty()) open.pop_back();
          in_key = false;
        } else if (c == '=') {
          in_key = false, key_parts = 1;
        } else if (c == ',') {
          in_key = !open.empty() && open.back() == Open::InlineTable;
          key_parts = 1;
        } else if (c == '.' && in_key) {
          ++key_parts;
          check();
        }
        break;
    }
  }
}

ConfigNode convert(const toml::node& node, const std::string& origin);

ConfigNode convert_table(const toml::table& table, const std::string& origin) {
  // TOML++ keeps keys sorted; wscsl keeps them in file order.
  std::vector<std::pair<const toml::key*, const toml::node*>> members;
  for (auto&& [key, value] : table)
    members.emplace_back(&key, &value);
  std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
    const auto& x = a.first->source().begin;
    const auto& y = b.first->source().begin;
    return std::tie(x.line, x.column) < std::tie(y.line, y.column);
  });
  ConfigNode out = ConfigNode::table(location_of(table.source(), origin));
  for (const auto& [key, value] : members)
    out.set(std::string(key->str()), convert(*value, origin), location_of(key->source(), origin));
  return out;
}

ConfigNode convert(const toml::node& node, const std::string& origin) {
  const SourceLocation where = location_of(node.source(), origin);
  switch (node.type()) {
    case toml::node_type::table:
      return convert_table(*node.as_table(), origin);
    case toml::node_type::array: {
      ConfigNode out = ConfigNode::array(where);
      for (const toml::node& item : *node.as_array())
        out.push_back(convert(item, origin));
      return out;
    }
    case toml::node_type::string:
      return ConfigNode::string(node.as_string()->get(), where);
    case toml::node_type::integer:
      return ConfigNode::integer(node.as_integer()->get(), where);
    case toml::node_type::floating_point:
      return ConfigNode::floating(node.as_floating_point()->get(), where);
    case toml::node_type::boolean:
      return ConfigNode::boolean(node.as_boolean()->get(), where);
    default:
      fail(where, "dates and times are not valid in a wscsl pipeline; write them as strings");
  }
}

// The first node more than `levels` tables and arrays below `node`, or null. Bounding the tree,
// not only the text, keeps every tree wscsl accepts writable by to_toml in a form it reads back
// (a dotted key under a table header is one path when written back).
const ConfigNode* deeper_than(const ConfigNode& node, int levels) {
  if (levels < 0) return &node;
  for (const ConfigMember& m : node.members())
    if (const ConfigNode* deep = deeper_than(m.value, levels - 1)) return deep;
  for (const ConfigNode& item : node.items())
    if (const ConfigNode* deep = deeper_than(item, levels - 1)) return deep;
  return nullptr;
}

ConfigNode parse_document(const std::string& text, const std::string& origin) {
  check_nesting(text, origin);
  try {
    toml::table table = toml::parse(text, origin);
    ConfigNode root = convert_table(table, origin);
    root.set_location(SourceLocation{origin, 1, 1});
    if (const ConfigNode* deep = deeper_than(root, kMaxNesting))
      fail(deep->location(), too_deep_message());
    return root;
  } catch (const toml::parse_error& e) {
    fail(location_of(e.source(), origin), std::string(e.description()));
  }
}

}  // namespace

ConfigNode load_toml_file(const std::filesystem::path& path) {
  const std::string origin = path.string();
  const std::string problem = file_problem(path);
  if (!problem.empty()) fail({origin}, problem);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail({origin}, "cannot read file: " + ec.message());
  if (size > kMaxFileBytes)
    fail({origin},
         fmt::format("file is {} bytes; pipelines are limited to {} bytes", size, kMaxFileBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail({origin}, "cannot open file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_document(buffer.str(), origin);
}

ConfigNode parse_toml(const std::string& text, const std::string& origin) {
  return parse_document(text, origin);
}

void apply_override(ConfigNode& root, const std::string& assignment, Diagnostics& diagnostics) {
  const SourceLocation where{"--set " + assignment};
  if (!valid_utf8(assignment)) {
    diagnostics.error(where, "the override is not valid UTF-8 text");
    return;
  }
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    diagnostics.error(where, "expected KEY=VALUE, e.g. --set trainer.lr=0.01");
    return;
  }
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  ConfigNode value;
  try {
    toml::table parsed = toml::parse("v = " + text, std::string_view("<override>"));
    value = convert(*parsed.get("v"), where.file);
  } catch (const toml::parse_error&) {
    value = ConfigNode::string(text);
  } catch (const ConfigError& e) {
    diagnostics.append(e.diagnostics());
    return;
  }
  value.set_location(where);

  const std::vector<std::string> path = split(key, '.');
  if (deeper_than(value, kMaxNesting - static_cast<int>(path.size()))) {
    diagnostics.error(where, too_deep_message());
    return;
  }
  ConfigNode* current = &root;
  std::string walked;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const std::string& segment = path[i];
    if (segment.empty()) {
      diagnostics.error(where, fmt::format("empty key segment in '{}'", key));
      return;
    }
    const bool last = i + 1 == path.size();
    if (current->is_array()) {
      char* end = nullptr;
      const long index = std::strtol(segment.c_str(), &end, 10);
      const auto count = static_cast<long>(current->items().size());
      if (*end != '\0' || index < 0 || index >= count) {
        diagnostics.error(where, fmt::format("'{}' is an array of {} element(s); '{}' is not an "
                                             "index into it",
                                             walked, count, segment));
        return;
      }
      ConfigNode& element = current->items()[static_cast<std::size_t>(index)];
      if (last) {
        element = value;
        return;
      }
      current = &element;
    } else if (current->is_table()) {
      if (last) {
        current->set(segment, value, where);
        return;
      }
      ConfigNode* next = current->find(segment);
      if (!next) next = &current->set(segment, ConfigNode::table(where), where);
      current = next;
    } else {
      diagnostics.error(where,
                        fmt::format("'{}' is {}, not a table", walked, current->describe_type()));
      return;
    }
    walked += (walked.empty() ? "" : ".") + segment;
  }
}

namespace {

bool is_array_of_tables(const ConfigNode& n) {
  if (!n.is_array() || n.items().empty()) return false;
  for (const ConfigNode& item : n.items())
    if (!item.is_table()) return false;
  return true;
}

void write_table(std::string& out, const ConfigNode& table, const std::string& path) {
  for (const ConfigMember& m : table.members()) {
    if (m.value.is_table() || is_array_of_tables(m.value)) continue;
    out += toml_key(m.key) + " = " + m.value.repr() + "\n";
  }
  for (const ConfigMember& m : table.members()) {
    const std::string child = path.empty() ? toml_key(m.key) : path + "." + toml_key(m.key);
    if (m.value.is_table()) {
      out += "\n[" + child + "]\n";
      write_table(out, m.value, child);
    } else if (is_array_of_tables(m.value)) {
      for (const ConfigNode& item : m.value.items()) {
        out += "\n[[" + child + "]]\n";
        write_table(out, item, child);
      }
    }
  }
}

}  // namespace

std::string to_toml(const ConfigNode& root) {
  std::string out;
  write_table(out, root, "");
  return out;
}

}  // namespace wscsl
