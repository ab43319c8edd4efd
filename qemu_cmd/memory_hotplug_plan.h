// attach-device and detach-device of a <memory model='dimm'|'virtio-mem'>, pure: the device planned
// by the same rules as the memory of a start (qemu_cmd/memory_plan.h: slot, node, page size, host
// nodes and policy, shared or private; qemu_cmd/thread_context_plan.h: who fills it), as libvirt
// 9.0 names and places a hot-plugged one (a DIMM: the lowest free slot, dimm<slot>/memdimm<slot>;
// virtio-mem: the next virtiomem<N>/memvirtiomem<N>, a free hotpluggable PCI slot, its backend
// never preallocated: the device preallocates the blocks the guest plugs). A shared
// hugetlb memfd is filled by qlaunch before QEMU sees it (handed over with add-fd), so QEMU's
// lock is never held while memory is zeroed; any other backend QEMU preallocates in object-add
// (with a thread-context on the backend's nodes only for a QEMU without -sandbox: the sandbox's
// resourcecontrol=deny forbids the CPU affinity a context sets once QEMU runs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/domain_def.h"
#include "domain/parse_fragment.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/hotplug_plan.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

struct MemoryAttachPlan {
  MemoryBackend backend;                 // prealloc: kLauncher (qlaunch fills a memfd), kQemu or kNone
  std::optional<ThreadContext> context;  // QEMU preallocates with it (deleted after object-add)
  MemoryDeviceArg device;                // pc-dimm or virtio-mem-pci
  DeviceRecord record;                   // family "memory", id dimm<slot> / virtiomem<N> (with its PCI slot)
  nlohmann::json device_add;             // device_add's arguments
  std::vector<LaunchPlan::PoolNeed> pool_needs;
  uint64_t memory_bytes_after = 0;       // the running definition's <memory> once attached
  std::vector<Diagnostic> notes;

  // QMP arguments. ObjectAdd: the backend; for kLauncher its mem-path is /proc/self/fd/<qemu_fd>,
  // the number QEMU reported for the memfd in add-fd's reply.
  nlohmann::json ContextAdd(const QemuCaps& caps) const;
  nlohmann::json ObjectAdd(const QemuCaps& caps, int qemu_fd = -1) const;
  const nlohmann::json& DeviceAdd() const { return device_add; }
  // plan.json's entries for it ("backends", "memory_devices").
  nlohmann::json BackendJson() const;
  nlohmann::json DeviceJson() const;
};

// Throws DiagnosticError naming the device file and line: no <maxMemory>, the size beyond it, no
// free slot (libvirt counts virtio-mem devices against the slots too), a slot taken or beyond the
// slots, a guest node the domain lacks, a page size or host node the host lacks, virtio-mem's own
// rules (block, requested), no free hotpluggable PCI slot; an nvdimm ("not supported").
// `running`: the running definition and device records (PCI slots taken); `memory_devices`:
// plan.json's, where the running memory devices sit (the slots and names they were given, which a
// plan of the running definition alone could not tell once one before them was detached).
MemoryAttachPlan PlanMemoryAttach(const RunningDomain& running, const nlohmann::json& memory_devices,
                                  const domain::DeviceFragment& fragment, const numa::HostTopology& host,
                                  const QemuCaps& caps);

// The running memory device the fragment names (model, size, guest node, and a DIMM's slot when
// it gives one, as libvirt matches a memory device), its id, and what goes after DEVICE_DELETED
// (object-del of its backend). Throws DiagnosticError when none matches. (QEMU before 8.2
// refuses to unplug virtio-mem: device_del says so, and nothing changes.)
struct MemoryDetachPlan {
  DetachPlan detach;          // element "memory", id dimm<slot> / virtiomem<N>, release, running_line
  std::string memdev;
  uint64_t size_bytes = 0;    // as the running definition gives it (what <memory> loses)
};
MemoryDetachPlan PlanMemoryDetach(const domain::DomainDef& running, const nlohmann::json& memory_devices,
                                  const domain::DeviceFragment& fragment);

}  // namespace qlaunch::qemu
