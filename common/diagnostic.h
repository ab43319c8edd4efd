// Diagnostic: one problem found in user input or on the host, with where it was found.
// Rendered as "FILE:LINE: error: <element>: message" (line and element when known).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace qlaunch {

enum class Severity { kWarning, kError };

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string file;     // input file; empty for host/QEMU problems
  int line = 0;         // 1-based; 0 when unknown
  std::string element;  // e.g. "cell", "page", "memnode"; empty when not about an element
  std::string message;

  std::string ToString() const;
};

bool HasErrors(const std::vector<Diagnostic>& diags);

// Thrown for failures that stop a command; carries every diagnostic gathered so far.
class DiagnosticError : public std::runtime_error {
 public:
  explicit DiagnosticError(std::vector<Diagnostic> diags);
  explicit DiagnosticError(Diagnostic diag);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

}  // namespace qlaunch
