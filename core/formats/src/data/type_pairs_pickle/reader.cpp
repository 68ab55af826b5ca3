#include "wscsl/data/type_pairs_pickle.hpp"

#include <cstdint>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "../byte_cursor.hpp"
#include "python_text.hpp"
#include "wscsl/data/index_files.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

// The only shapes a list of string pairs is built from. A list holds tuples and a tuple holds
// strings, so no value can contain itself, whatever the memo references.
struct Node {
  enum class Kind { Text, Tuple, List } kind;
  std::string text;
  std::vector<std::shared_ptr<Node>> items;
};
using NodePtr = std::shared_ptr<Node>;

const char* kind_name(Node::Kind kind) {
  switch (kind) {
    case Node::Kind::Text:
      return "a string";
    case Node::Kind::Tuple:
      return "a tuple";
    case Node::Kind::List:
      return "a list";
  }
  return "a value";
}

class PickleReader : ByteCursor {
 public:
  PickleReader(const std::string& bytes, const fs::path& file) : ByteCursor(bytes, file) {}

  std::vector<TypePair> run() {
    while (true) {
      op_ = pos_;
      const auto code = static_cast<unsigned char>(next_byte("an opcode"));
      if (code == '.') break;
      step(code);
    }
    if (pos_ != b_.size())
      fail(pos_, fmt::format("{} bytes follow the STOP opcode; expected the pickle to end there",
                             b_.size() - pos_));
    if (stack_.size() != 1 || !stack_[0] || stack_[0]->kind != Node::Kind::List)
      fail(op_,
           "the pickle does not leave exactly one list; expected a list of (type1, type2) "
           "tuples");
    return pairs(*stack_[0]);
  }

 private:
  // A protocol-0 argument: the bytes up to the next line feed.
  std::string line(const char* what) {
    const std::size_t end = b_.find('\n', pos_);
    if (end == std::string::npos) fail(pos_, fmt::format("{} is not ended by a line feed", what));
    std::string out = b_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }

  std::uint64_t decimal(const char* what) {
    const std::size_t at = pos_;
    const std::string text = line(what);
    const auto id = parse_id(text);
    if (!id) fail(at, fmt::format("{} is '{}'; expected a non-negative integer", what, text));
    return static_cast<std::uint64_t>(*id);
  }

  NodePtr text_node(std::string text, std::size_t at) {
    if (!valid_utf8(text)) fail(at, "a string is not valid UTF-8; expected a type name");
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Text;
    n->text = std::move(text);
    return n;
  }

  // A text argument decoded by `decode`, its problems reported at `at`.
  template <class Decode>
  std::string decoded(Decode decode, const std::string& argument, std::size_t at) {
    try {
      return decode(argument);
    } catch (const pickle_text::BadArgument& e) {
      fail(at, e.what());
    }
  }

  void push(NodePtr value) {
    if (++pushed_ > kMaxTypePairsPickleValues)
      fail(op_, fmt::format("the pickle builds more than {} values (memo references counted); "
                            "expected a list of (type1, type2) pairs",
                            kMaxTypePairsPickleValues));
    stack_.push_back(std::move(value));
  }

  NodePtr pop(const char* opcode) {
    if (stack_.empty() || !stack_.back())
      fail(op_, fmt::format("{} finds no value on the stack", opcode));
    NodePtr n = std::move(stack_.back());
    stack_.pop_back();
    return n;
  }

  // The values above the topmost mark, which is removed.
  std::vector<NodePtr> pop_mark(const char* opcode) {
    std::size_t mark = stack_.size();
    while (mark > 0 && stack_[mark - 1])
      --mark;
    if (mark == 0) fail(op_, fmt::format("{} finds no mark on the stack", opcode));
    std::vector<NodePtr> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark - 1);
    return items;
  }

  void require(const NodePtr& n, Node::Kind kind, const char* opcode, const char* role) {
    if (n->kind != kind)
      fail(op_, fmt::format("{} gets {} as {}; expected {}", opcode, kind_name(n->kind), role,
                            kind_name(kind)));
  }

  NodePtr tuple_of(std::vector<NodePtr> items, const char* opcode) {
    for (const NodePtr& item : items)
      require(item, Node::Kind::Text, opcode, "a tuple element");
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Tuple;
    n->items = std::move(items);
    return n;
  }

  void append_to(const NodePtr& list, std::vector<NodePtr> items, const char* opcode) {
    require(list, Node::Kind::List, opcode, "the container");
    for (NodePtr& item : items) {
      require(item, Node::Kind::Tuple, opcode, "a list element");
      for (const NodePtr& text : item->items)
        text_bytes_ += text->text.size();
      if (text_bytes_ > kMaxTypePairsTextBytes)
        fail(op_, fmt::format("the pairs' type names come to more than {} bytes (each memo "
                              "reference counted); expected short type names",
                              kMaxTypePairsTextBytes));
      list->items.push_back(std::move(item));
    }
  }

  void put(std::uint64_t index) {
    if (stack_.empty() || !stack_.back()) fail(op_, "a memo put finds no value on the stack");
    memo_[index] = stack_.back();
  }

  void get(std::uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end())
      fail(op_, fmt::format("memo entry {} is read before it is written", index));
    push(it->second);
  }

  void step(unsigned char code) {
    switch (code) {
      case 0x80: {  // PROTO
        const auto v = static_cast<unsigned char>(next_byte("the protocol"));
        if (op_ != 0)
          fail(op_, "PROTO appears after the start; expected it only as the first opcode");
        if (v < 2 || v > 4) fail(op_, fmt::format("protocol {}; expected 0 to 4", v));
        return;
      }
      case 0x95: {  // FRAME: only groups the opcodes that follow
        const std::uint64_t n = little_endian(8, "a frame length");
        if (n > b_.size() - pos_) fail(op_, "a frame runs past the end of the file");
        return;
      }
      case '(':
        push(nullptr);
        return;
      case ']': {
        auto n = std::make_shared<Node>();
        n->kind = Node::Kind::List;
        push(n);
        return;
      }
      case 'l': {
        auto n = std::make_shared<Node>();
        n->kind = Node::Kind::List;
        append_to(n, pop_mark("LIST"), "LIST");
        push(n);
        return;
      }
      case ')':
        push(tuple_of({}, "EMPTY_TUPLE"));
        return;
      case 't':
        push(tuple_of(pop_mark("TUPLE"), "TUPLE"));
        return;
      case 0x85:
      case 0x86:
      case 0x87: {
        const std::size_t n = code - 0x84u;
        std::vector<NodePtr> items(n);
        for (std::size_t i = n; i > 0; --i)
          items[i - 1] = pop("TUPLE1/2/3");
        push(tuple_of(std::move(items), "TUPLE1/2/3"));
        return;
      }
      case 'a': {
        NodePtr value = pop("APPEND");
        if (stack_.empty() || !stack_.back()) fail(op_, "APPEND finds no list on the stack");
        append_to(stack_.back(), {std::move(value)}, "APPEND");
        return;
      }
      case 'e': {
        std::vector<NodePtr> items = pop_mark("APPENDS");
        NodePtr list = pop("APPENDS");
        append_to(list, std::move(items), "APPENDS");
        push(std::move(list));
        return;
      }
      case 'S': {
        const std::size_t at = pos_;
        push(text_node(decoded(pickle_text::unrepr, line("the STRING argument"), at), at));
        return;
      }
      case 'V': {
        const std::size_t at = pos_;
        push(text_node(decoded(pickle_text::raw_unicode, line("the UNICODE argument"), at), at));
        return;
      }
      case 'T':
      case 'X': {
        const std::uint64_t n = little_endian(4, "a string length");
        if (code == 'T' && n >= (std::uint64_t{1} << 31))
          fail(op_, "BINSTRING has a negative length");
        const std::size_t at = pos_;
        push(text_node(take(n, "a string"), at));
        return;
      }
      case 'U':
      case 0x8c: {
        const std::uint64_t n = static_cast<unsigned char>(next_byte("a string length"));
        const std::size_t at = pos_;
        push(text_node(take(n, "a string"), at));
        return;
      }
      case 0x8d: {
        const std::uint64_t n = little_endian(8, "a string length");
        const std::size_t at = pos_;
        push(text_node(take(n, "a string"), at));
        return;
      }
      case 'p':
        put(decimal("the PUT index"));
        return;
      case 'q':
        put(static_cast<unsigned char>(next_byte("the BINPUT index")));
        return;
      case 'r':
        put(little_endian(4, "the LONG_BINPUT index"));
        return;
      case 0x94:
        put(memo_.size());
        return;
      case 'g':
        get(decimal("the GET index"));
        return;
      case 'h':
        get(static_cast<unsigned char>(next_byte("the BINGET index")));
        return;
      case 'j':
        get(little_endian(4, "the LONG_BINGET index"));
        return;
      default:
        fail(op_, fmt::format("opcode 0x{:02x} is not one a pickled list of (str, str) tuples uses",
                              code));
    }
  }

  std::vector<TypePair> pairs(const Node& list) const {
    if (list.items.empty())
      fail(op_, "the list is empty; expected at least one (type1, type2) pair");
    std::vector<TypePair> out;
    for (std::size_t i = 0; i < list.items.size(); ++i) {
      const Node& t = *list.items[i];
      if (t.items.size() != 2)
        throw DataError(
            fmt::format("{}: entry {} of the list is a tuple of {} strings; expected a "
                        "(type1, type2) pair",
                        file_.string(), i, t.items.size()));
      if (t.items[0]->text.empty() || t.items[1]->text.empty())
        throw DataError(
            fmt::format("{}: entry {} of the list has an empty type name; expected "
                        "two type names",
                        file_.string(), i));
      out.emplace_back(t.items[0]->text, t.items[1]->text);
    }
    return out;
  }

  std::size_t op_ = 0;          // where the current opcode starts
  std::vector<NodePtr> stack_;  // nullptr is a mark
  std::size_t pushed_ = 0;      // values pushed so far, memo gets included
  std::size_t text_bytes_ = 0;  // of the type names in the list, each reference counted
  std::map<std::uint64_t, NodePtr> memo_;
};

}  // namespace

std::vector<TypePair> parse_type_pairs_pickle(const std::string& bytes, const fs::path& file) {
  return PickleReader(bytes, file).run();
}

std::vector<TypePair> read_type_pairs_pickle(const fs::path& file) {
  return parse_type_pairs_pickle(read_file(file, kMaxTypePairsPickleBytes), file);
}

}  // namespace wscsl
