#include "wscsl/config/value_codec.hpp"

#include <cstdint>
#include <limits>
#include <type_traits>

namespace wscsl::schema_detail {
namespace {

// How one C++ type is read and written: name(), read(node, out) and write(value).
template <class T, class = void>
struct Rules;

template <>
struct Rules<bool> {
  static std::string name() { return "boolean"; }
  static bool read(const ConfigNode& n, bool& out) {
    if (!n.is_boolean()) return false;
    out = n.as_boolean();
    return true;
  }
  static ConfigNode write(bool v) { return ConfigNode::boolean(v); }
};

// TOML integers are 64-bit and signed; a value that does not fit T is of the wrong type.
template <class T>
struct Rules<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static std::string name() { return "integer"; }
  static bool read(const ConfigNode& n, T& out) {
    if (!n.is_integer()) return false;
    const std::int64_t v = n.as_integer();
    if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min())) return false;
    if (static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()) &&
        v >= 0)
      return false;
    out = static_cast<T>(v);
    return true;
  }
  static ConfigNode write(T v) { return ConfigNode::integer(static_cast<std::int64_t>(v)); }
};

template <>
struct Rules<double> {
  static std::string name() { return "float"; }
  static bool read(const ConfigNode& n, double& out) {
    if (!n.is_number()) return false;  // an integer widens to a float
    out = n.as_number();
    return true;
  }
  static ConfigNode write(double v) { return ConfigNode::floating(v); }
};

template <>
struct Rules<std::string> {
  static std::string name() { return "string"; }
  static bool read(const ConfigNode& n, std::string& out) {
    if (!n.is_string()) return false;
    out = n.as_string();
    return true;
  }
  static ConfigNode write(const std::string& v) { return ConfigNode::string(v); }
};

// A list is read whole: one item of the wrong type leaves the option as it was.
template <class T>
struct Rules<std::vector<T>> {
  static std::string name() {
    const std::string inner = Rules<T>::name();
    return "list of " + (inner == "boolean" ? std::string("booleans") : inner + "s");
  }
  static bool read(const ConfigNode& n, std::vector<T>& out) {
    if (!n.is_array()) return false;
    std::vector<T> read_items;
    read_items.reserve(n.items().size());
    for (const ConfigNode& item : n.items()) {
      T v{};
      if (!Rules<T>::read(item, v)) return false;
      read_items.push_back(std::move(v));
    }
    out = std::move(read_items);
    return true;
  }
  static ConfigNode write(const std::vector<T>& v) {
    ConfigNode a = ConfigNode::array();
    for (const T& item : v)
      a.push_back(Rules<T>::write(item));
    return a;
  }
};

template <class T>
const ValueCodec& codec() {
  static const ValueCodec c{
      Rules<T>::name(),
      [](const ConfigNode& node, void* out) { return Rules<T>::read(node, *static_cast<T*>(out)); },
      [](const void* value) { return Rules<T>::write(*static_cast<const T*>(value)); }};
  return c;
}

}  // namespace

const ValueCodec& value_codec(CodecOf<bool>) {
  return codec<bool>();
}
const ValueCodec& value_codec(CodecOf<signed char>) {
  return codec<signed char>();
}
const ValueCodec& value_codec(CodecOf<unsigned char>) {
  return codec<unsigned char>();
}
const ValueCodec& value_codec(CodecOf<short>) {
  return codec<short>();
}
const ValueCodec& value_codec(CodecOf<unsigned short>) {
  return codec<unsigned short>();
}
const ValueCodec& value_codec(CodecOf<int>) {
  return codec<int>();
}
const ValueCodec& value_codec(CodecOf<unsigned>) {
  return codec<unsigned>();
}
const ValueCodec& value_codec(CodecOf<long>) {
  return codec<long>();
}
const ValueCodec& value_codec(CodecOf<unsigned long>) {
  return codec<unsigned long>();
}
const ValueCodec& value_codec(CodecOf<long long>) {
  return codec<long long>();
}
const ValueCodec& value_codec(CodecOf<unsigned long long>) {
  return codec<unsigned long long>();
}
const ValueCodec& value_codec(CodecOf<double>) {
  return codec<double>();
}
const ValueCodec& value_codec(CodecOf<std::string>) {
  return codec<std::string>();
}

template <class T>
using List = std::vector<T>;

const ValueCodec& value_codec(CodecOf<List<bool>>) {
  return codec<List<bool>>();
}
const ValueCodec& value_codec(CodecOf<List<signed char>>) {
  return codec<List<signed char>>();
}
const ValueCodec& value_codec(CodecOf<List<unsigned char>>) {
  return codec<List<unsigned char>>();
}
const ValueCodec& value_codec(CodecOf<List<short>>) {
  return codec<List<short>>();
}
const ValueCodec& value_codec(CodecOf<List<unsigned short>>) {
  return codec<List<unsigned short>>();
}
const ValueCodec& value_codec(CodecOf<List<int>>) {
  return codec<List<int>>();
}
const ValueCodec& value_codec(CodecOf<List<unsigned>>) {
  return codec<List<unsigned>>();
}
const ValueCodec& value_codec(CodecOf<List<long>>) {
  return codec<List<long>>();
}
const ValueCodec& value_codec(CodecOf<List<unsigned long>>) {
  return codec<List<unsigned long>>();
}
const ValueCodec& value_codec(CodecOf<List<long long>>) {
  return codec<List<long long>>();
}
const ValueCodec& value_codec(CodecOf<List<unsigned long long>>) {
  return codec<List<unsigned long long>>();
}
const ValueCodec& value_codec(CodecOf<List<double>>) {
  return codec<List<double>>();
}
const ValueCodec& value_codec(CodecOf<List<std::string>>) {
  return codec<List<std::string>>();
}

}  // namespace wscsl::schema_detail
