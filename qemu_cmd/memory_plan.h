// PlanMemory: the guest's memory backends and memory devices, decided the way libvirt 9.0's
// QEMU driver decides them (ids, sizes, backend type, page size, mem-path, share, prealloc,
// host-nodes/policy). Who preallocates and with which thread-context is decided afterwards
// (qemu_cmd/thread_context_plan.h). Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;
// libvirt rounds boot memory, NUMA cells and <maxMemory> up to 1 MiB, and DIMMs up to 2 MiB.
inline constexpr uint64_t kCellAlign = kMiB;
inline constexpr uint64_t kDimmAlign = 2 * kMiB;
// The host's ordinary page size: a <page> of this size means "no huge pages".
inline constexpr uint64_t kBasePageBytes = 4096;

uint64_t AlignUp(uint64_t value, uint64_t align);

struct MemoryLayout {
  uint64_t initial_bytes = 0;        // -m size=
  std::optional<uint64_t> max_bytes; // -m maxmem= (aligned), with slots
  unsigned slots = 0;
  // In the order they are rendered: "pc.ram" (no guest NUMA) or "ram-node<id>" by cell id,
  // then one backend per memory device in document order ("memdimm<slot>"/"memnvdimm<slot>",
  // slots assigned like libvirt: the device's own, else the lowest free one). prealloc is kQemu for every
  // backend that must be preallocated and kNone for the rest (PlanPrealloc refines it).
  std::vector<MemoryBackend> backends;
  std::vector<MemoryDeviceArg> devices;  // devices[i] uses the i-th backend with is_device
  bool machine_memory_backend = false;   // -machine memory-backend=pc.ram
  bool has_nvdimm = false;               // -machine nvdimm=on
  std::vector<Diagnostic> notes;         // warnings (numad placement, restrictive mode, ...)
};

// Throws DiagnosticError naming the element responsible: a host node that does not exist
// ("NUMA node N is unavailable"), a page size without a hugetlbfs mount ("Unable to find any
// usable hugetlbfs mount for N KiB"), memfd on a QEMU without it, DIMMs without <maxMemory>.
MemoryLayout PlanMemory(const domain::DomainDef& def, const numa::HostTopology& host, const QemuCaps& caps,
                        const PlanOptions& opts);

// Huge pages taken per (host node, page size): a backend bound with policy "bind" to exactly
// one node counts against that node, any other hugetlb backend against node -1 ("any").
// Sorted by node, then page size.
std::vector<LaunchPlan::PoolNeed> PoolNeeds(const std::vector<MemoryBackend>& backends);

}  // namespace qlaunch::qemu
