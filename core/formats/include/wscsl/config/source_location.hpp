// Where a configuration value came from: a file position or a command-line override.
#pragma once

#include <string>

namespace wscsl {

struct SourceLocation {
  std::string file;  // a path, or a label such as "--set trainer.lr=0.1"
  int line = 0;      // 1-based; 0 when the origin has no lines (command line, defaults)
  int column = 0;    // 1-based; 0 when unknown

  bool known() const { return !file.empty(); }
  // "file:line:col", "file:line" or "file", as compilers print positions.
  std::string str() const;
};

}  // namespace wscsl
