// How an option of each C++ type is read from TOML and written back. The codecs are defined in the
// formats library, so that the rules (an integer must fit its type, an integer widens to a float,
// a list is read whole or not at all) are the same for every plugin and change without
// recompiling one.
#pragma once

#include <string>
#include <vector>

#include "wscsl/config/node.hpp"

namespace wscsl::schema_detail {

struct ValueCodec {
  std::string type_name;  // "float", "integer", "list of strings", ... for messages and describe
  // Stores the T that `node` holds at `out` (a T*); false, leaving it untouched, when node holds
  // no T.
  bool (*read)(const ConfigNode& node, void* out);
  ConfigNode (*write)(const void* value);  // `value` is a const T*
};

// Selects the codec of T; an option of a type without one does not compile.
template <class T>
struct CodecOf {};

const ValueCodec& value_codec(CodecOf<bool>);
const ValueCodec& value_codec(CodecOf<signed char>);
const ValueCodec& value_codec(CodecOf<unsigned char>);
const ValueCodec& value_codec(CodecOf<short>);
const ValueCodec& value_codec(CodecOf<unsigned short>);
const ValueCodec& value_codec(CodecOf<int>);
const ValueCodec& value_codec(CodecOf<unsigned>);
const ValueCodec& value_codec(CodecOf<long>);
const ValueCodec& value_codec(CodecOf<unsigned long>);
const ValueCodec& value_codec(CodecOf<long long>);
const ValueCodec& value_codec(CodecOf<unsigned long long>);
const ValueCodec& value_codec(CodecOf<double>);
const ValueCodec& value_codec(CodecOf<std::string>);

const ValueCodec& value_codec(CodecOf<std::vector<bool>>);
const ValueCodec& value_codec(CodecOf<std::vector<signed char>>);
const ValueCodec& value_codec(CodecOf<std::vector<unsigned char>>);
const ValueCodec& value_codec(CodecOf<std::vector<short>>);
const ValueCodec& value_codec(CodecOf<std::vector<unsigned short>>);
const ValueCodec& value_codec(CodecOf<std::vector<int>>);
const ValueCodec& value_codec(CodecOf<std::vector<unsigned>>);
const ValueCodec& value_codec(CodecOf<std::vector<long>>);
const ValueCodec& value_codec(CodecOf<std::vector<unsigned long>>);
const ValueCodec& value_codec(CodecOf<std::vector<long long>>);
const ValueCodec& value_codec(CodecOf<std::vector<unsigned long long>>);
const ValueCodec& value_codec(CodecOf<std::vector<double>>);
const ValueCodec& value_codec(CodecOf<std::vector<std::string>>);

}  // namespace wscsl::schema_detail
