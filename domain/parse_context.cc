#include "domain/parse_context.h"

#include <algorithm>

#include "domain/xml_node.h"

namespace qlaunch::domain {

namespace {

// Unsupported findings come from two passes (the table walk, then the section parsers).
std::vector<Diagnostic> SortedByLine(std::vector<Diagnostic> diags) {
  std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
  return diags;
}

}  // namespace

Diagnostic ParseContext::At(const xmlNode* node, Severity severity, std::string message) const {
  return Diagnostic{severity, file_, node ? NodeLine(node) : 0, node ? NodeName(node) : "", std::move(message)};
}

void ParseContext::Fail(const xmlNode* node, std::string message) const {
  throw DiagnosticError(At(node, Severity::kError, std::move(message)));
}

void ParseContext::Unsupported(const xmlNode* node, std::string message) {
  warnings_.push_back(At(node, strict_ ? Severity::kError : Severity::kWarning, std::move(message)));
}

void ParseContext::ThrowStrictFindings() const {
  if (strict_ && !warnings_.empty()) throw DiagnosticError(SortedByLine(warnings_));
}

std::vector<Diagnostic> ParseContext::TakeWarnings() { return SortedByLine(std::move(warnings_)); }

}  // namespace qlaunch::domain
