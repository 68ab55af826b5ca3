#include "wscsl/config/diagnostics.hpp"

#include <algorithm>
#include <tuple>

#include "wscsl/error.hpp"

namespace wscsl {

std::string Diagnostic::format() const {
  std::string out = where.known() ? where.str() + ": " : std::string();
  out += severity == Severity::Error ? "error: " : "warning: ";
  out += message;
  for (const std::string& note : notes)
    out += "\n    note: " + note;
  return out;
}

void Diagnostics::error(SourceLocation where, std::string message, std::vector<std::string> notes) {
  items_.push_back(Diagnostic{Diagnostic::Severity::Error, std::move(where), std::move(message),
                              std::move(notes)});
}

void Diagnostics::warning(SourceLocation where, std::string message,
                          std::vector<std::string> notes) {
  items_.push_back(Diagnostic{Diagnostic::Severity::Warning, std::move(where), std::move(message),
                              std::move(notes)});
}

void Diagnostics::append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool Diagnostics::has_errors() const {
  return error_count() > 0;
}

std::size_t Diagnostics::error_count() const {
  return static_cast<std::size_t>(std::count_if(items_.begin(), items_.end(), [](const auto& d) {
    return d.severity == Diagnostic::Severity::Error;
  }));
}

std::string Diagnostics::format() const {
  // In source order, as a compiler would print them.
  std::vector<Diagnostic> sorted = items_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.where.file != b.where.file) return false;
    return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
  });
  std::string out;
  for (const Diagnostic& d : sorted) {
    if (!out.empty()) out += '\n';
    out += d.format();
  }
  return out;
}

Error::~Error() = default;
ConfigError::ConfigError(Diagnostics diagnostics)
    : Error(diagnostics.format()), diagnostics_(std::move(diagnostics)) {}
ConfigError::~ConfigError() = default;
PluginError::~PluginError() = default;
DataError::~DataError() = default;
ComponentError::~ComponentError() = default;

}  // namespace wscsl
