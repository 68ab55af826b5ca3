// The exceptions wscsl throws. They are defined (with their key functions) in the core library
// only, so a plugin never owns an exception type the host must catch.
#pragma once

#include <stdexcept>
#include <string>

#include "wscsl/config/diagnostics.hpp"

namespace wscsl {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ~Error() override;
};

// A pipeline, override or option that failed validation; carries every diagnostic.
class ConfigError : public Error {
 public:
  explicit ConfigError(Diagnostics diagnostics);
  ~ConfigError() override;
  const Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  Diagnostics diagnostics_;
};

// A plugin library that cannot be loaded, is incompatible, or collides with another.
class PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
};

// A malformed input file (dataset, index, checkpoint): the message names the file and line.
class DataError : public Error {
 public:
  using Error::Error;
  ~DataError() override;
};

// A component broke its tensor contract, or a plugin threw while running; the message names the
// component, the plugin and the pipeline table it was built from.
class ComponentError : public Error {
 public:
  using Error::Error;
  ~ComponentError() override;
};

}  // namespace wscsl
