// Guest memory sizes with libvirt's meaning (virDomainDefGetMemoryInitial / ...Total): with guest
// NUMA cells the initial memory is the sum of the cells and <memory> is recomputed as
// cells + memory devices; without cells it is <memory> minus the memory devices.
#pragma once

#include <cstdint>

#include "domain/domain_def.h"

namespace qlaunch::domain {

// The largest memory size the parser accepts for one element (libvirt: LLONG_MAX bytes), and
// the largest total ValidateDomain accepts.
inline constexpr uint64_t kMaxMemoryBytes = 0x7fffffffffffffffull;

// The smallest virtio-mem block libvirt accepts on x86 (the host's THP size there).
inline constexpr uint64_t kVirtioMemMinBlockBytes = 2ull << 20;

// The sums saturate at UINT64_MAX instead of wrapping (cells of several EiB must not add up to
// a small <memory>); ValidateDomain refuses anything above kMaxMemoryBytes.
uint64_t NumaCellsMemoryBytes(const DomainDef& def);
uint64_t MemoryDevicesBytes(const DomainDef& def);
uint64_t SaturatingAdd(uint64_t a, uint64_t b);

// Boot-time RAM (what QEMU's -m size= gets).
uint64_t InitialMemoryBytes(const DomainDef& def);

// Initial memory plus memory devices.
uint64_t TotalMemoryBytes(const DomainDef& def);

}  // namespace qlaunch::domain
