// .npy files as numpy's np.save writes them (format 1.0), for the tests.
#pragma once

#include <cstring>
#include <string>
#include <vector>

namespace npy_bytes {

// `dict` is the header dictionary, e.g. "{'descr': '<f4', 'fortran_order': False, 'shape': (2,
// 3), }"; padded with spaces and a newline so that the data starts at a multiple of 64 bytes.
inline std::string header(std::string dict) {
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>((dict.size() >> 8) & 0xff);
  return h + dict;
}

template <class T>
std::string data(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

inline std::string matrix(const std::vector<float>& values, int rows, int cols) {
  return header("{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) +
                ", " + std::to_string(cols) + "), }") +
         data(values);
}

}  // namespace npy_bytes
