// Diagnostics the planner raises about a domain: they name the domain's file, the line of the
// element responsible and the element.
#pragma once

#include <string>

#include "common/diagnostic.h"
#include "domain/domain_def.h"

namespace qlaunch::qemu {

Diagnostic PlanError(const domain::DomainDef& def, int line, std::string element, std::string message);
Diagnostic PlanWarning(const domain::DomainDef& def, int line, std::string element, std::string message);

}  // namespace qlaunch::qemu
