// Guest memory sizes with libvirt's meaning (virDomainDefGetMemoryInitial / ...Total): with guest
// NUMA cells the initial memory is the sum of the cells and <memory> is recomputed as
// cells + memory devices; without cells it is <memory> minus the memory devices.
#pragma once

#include <cstdint>

#include "domain/domain_def.h"

namespace qlaunch::domain {

uint64_t NumaCellsMemoryBytes(const DomainDef& def);
uint64_t MemoryDevicesBytes(const DomainDef& def);

// Boot-time RAM (what QEMU's -m size= gets).
uint64_t InitialMemoryBytes(const DomainDef& def);

// Initial memory plus memory devices.
uint64_t TotalMemoryBytes(const DomainDef& def);

}  // namespace qlaunch::domain
