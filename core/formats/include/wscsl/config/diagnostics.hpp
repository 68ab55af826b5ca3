// Compiler-style diagnostics ("file:line:col: error: ...") collected across a whole pipeline so a
// user sees every problem at once.
#pragma once

#include <string>
#include <vector>

#include "wscsl/config/source_location.hpp"

namespace wscsl {

struct Diagnostic {
  enum class Severity { Error, Warning };
  Severity severity = Severity::Error;
  SourceLocation where;
  std::string message;
  std::vector<std::string> notes;

  // "where: error: message" followed by one "    note: ..." line per note.
  std::string format() const;
};

class Diagnostics {
 public:
  void error(SourceLocation where, std::string message, std::vector<std::string> notes = {});
  void warning(SourceLocation where, std::string message, std::vector<std::string> notes = {});
  void append(const Diagnostics& other);

  bool has_errors() const;
  std::size_t error_count() const;
  const std::vector<Diagnostic>& all() const { return items_; }
  bool empty() const { return items_.empty(); }
  // Every diagnostic, one per line, in the order they were reported.
  std::string format() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace wscsl
