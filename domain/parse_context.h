// ParseContext: where the parser reports. Fatal problems throw DiagnosticError naming file, line
// and element; unsupported things become warnings (or, with ParseOptions::strict, errors that are
// thrown together once the whole document has been walked).
#pragma once

#include <libxml/tree.h>

#include <string>
#include <vector>

#include "common/diagnostic.h"

namespace qlaunch::domain {

class ParseContext {
 public:
  ParseContext(std::string file, bool strict) : file_(std::move(file)), strict_(strict) {}

  const std::string& file() const { return file_; }

  Diagnostic At(const xmlNode* node, Severity severity, std::string message) const;
  [[noreturn]] void Fail(const xmlNode* node, std::string message) const;

  // An element, attribute or value that libvirt accepts but qlaunch does not implement.
  void Unsupported(const xmlNode* node, std::string message);

  // With strict, throws every Unsupported() finding as errors; otherwise does nothing.
  void ThrowStrictFindings() const;

  // The findings in line order.
  std::vector<Diagnostic> TakeWarnings();

 private:
  std::string file_;
  bool strict_;
  std::vector<Diagnostic> warnings_;
};

}  // namespace qlaunch::domain
