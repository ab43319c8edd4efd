#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

Diagnostic PlanError(const domain::DomainDef& def, int line, std::string element, std::string message) {
  Diagnostic d;
  d.severity = Severity::kError;
  d.file = def.file;
  d.line = line;
  d.element = std::move(element);
  d.message = std::move(message);
  return d;
}

Diagnostic PlanWarning(const domain::DomainDef& def, int line, std::string element, std::string message) {
  Diagnostic d = PlanError(def, line, std::move(element), std::move(message));
  d.severity = Severity::kWarning;
  return d;
}

}  // namespace qlaunch::qemu
