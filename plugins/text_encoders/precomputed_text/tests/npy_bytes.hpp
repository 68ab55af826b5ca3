// .npy files as numpy's np.save writes them (format 1.0), for the tests.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "wscsl/data/npy.hpp"

namespace npy_bytes {

template <class T>
std::string data(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

inline std::string matrix(const std::vector<float>& values, int rows, int cols) {
  return wscsl::npy_header("<f4", {rows, cols}) + data(values);
}

}  // namespace npy_bytes
