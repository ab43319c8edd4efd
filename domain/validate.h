// ValidateDomain: semantic checks of a parsed DomainDef that need no host knowledge
// (cells add up, disjoint cell CPUs, memnode/page nodesets name existing cells, ...).
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"

namespace qlaunch::domain {

// Returns every problem found (empty when the domain is consistent). Never throws.
std::vector<Diagnostic> ValidateDomain(const DomainDef& def);

// The checks of one memory device (size, guest node, nodemask, slot, the model's own rules) as
// ValidateDomain makes them, for a device added to `def` at run time (attach-device): the
// diagnostics name def.file.
std::vector<Diagnostic> ValidateMemoryDevice(const DomainDef& def, const MemoryDevice& mem);

}  // namespace qlaunch::domain
