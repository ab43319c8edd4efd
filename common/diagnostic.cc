#include "common/diagnostic.h"

#include <algorithm>

namespace qlaunch {

std::string Diagnostic::ToString() const {
  std::string s;
  if (!file.empty()) {
    s += file;
    if (line > 0) s += ':' + std::to_string(line);
    s += ": ";
  }
  s += severity == Severity::kError ? "error: " : "warning: ";
  if (!element.empty()) s += "<" + element + ">: ";
  s += message;
  return s;
}

bool HasErrors(const std::vector<Diagnostic>& diags) {
  return std::any_of(diags.begin(), diags.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

static std::string Join(const std::vector<Diagnostic>& diags) {
  std::string s;
  for (const auto& d : diags) {
    if (!s.empty()) s += '\n';
    s += d.ToString();
  }
  return s;
}

DiagnosticError::DiagnosticError(std::vector<Diagnostic> diags)
    : std::runtime_error(Join(diags)), diags_(std::move(diags)) {}

DiagnosticError::DiagnosticError(Diagnostic diag) : DiagnosticError(std::vector<Diagnostic>{std::move(diag)}) {}

}  // namespace qlaunch
