// .npy files as numpy's np.save writes them (format 1.0), for the tests.
#pragma once

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "wscsl/data/npy.hpp"

namespace npy_bytes {

// `dict` is the header dictionary, e.g. "{'descr': '<f4', 'fortran_order': False, 'shape': (2,
// 3), }".
inline std::string header(std::string dict) {
  return wscsl::npy_header_of_dictionary(std::move(dict));
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
