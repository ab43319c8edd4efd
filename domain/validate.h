// ValidateDomain: semantic checks of a parsed DomainDef that need no host knowledge
// (cells add up, disjoint cell CPUs, memnode/page nodesets name existing cells, ...).
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"

namespace qlaunch::domain {

// Returns every problem found (empty when the domain is consistent). Never throws.
std::vector<Diagnostic> ValidateDomain(const DomainDef& def);

}  // namespace qlaunch::domain
