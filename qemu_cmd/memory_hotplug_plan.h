// attach-device and detach-device of a <memory model='dimm'>, pure: the DIMM planned by the same
// rules as the memory of a start (qemu_cmd/memory_plan.h: slot, node, page size, host nodes and
// policy, shared or private; qemu_cmd/thread_context_plan.h: who fills it), as libvirt 9.0 names
// and places a hot-plugged DIMM (the lowest free slot, dimm<slot>/memdimm<slot>). A shared
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
  MemoryDeviceArg device;                // pc-dimm
  DeviceRecord record;                   // family "memory", id dimm<slot>
  std::vector<LaunchPlan::PoolNeed> pool_needs;
  uint64_t memory_bytes_after = 0;       // the running definition's <memory> once attached
  std::vector<Diagnostic> notes;

  // QMP arguments. ObjectAdd: the backend; for kLauncher its mem-path is /proc/self/fd/<qemu_fd>,
  // the number QEMU reported for the memfd in add-fd's reply.
  nlohmann::json ContextAdd(const QemuCaps& caps) const;
  nlohmann::json ObjectAdd(const QemuCaps& caps, int qemu_fd = -1) const;
  nlohmann::json DeviceAdd() const;
  // plan.json's entries for it ("backends", "memory_devices").
  nlohmann::json BackendJson() const;
  nlohmann::json DeviceJson() const;
};

// Throws DiagnosticError naming the device file and line: no <maxMemory>, the size beyond it, no
// free slot, a slot taken or beyond the slots, a guest node the domain lacks, a page size or host
// node the host lacks; a model other than dimm ("not supported").
// `memory_devices`: plan.json's, where the running DIMMs sit (the slots they were given, which a
// plan of the running definition alone could not tell once a DIMM before them was detached).
MemoryAttachPlan PlanMemoryAttach(const domain::DomainDef& running, const nlohmann::json& memory_devices,
                                  const domain::DeviceFragment& fragment, const numa::HostTopology& host,
                                  const QemuCaps& caps);

// The running DIMM the fragment names (model, size, guest node, and slot when it gives one, as
// libvirt matches a memory device), its id, and what goes after DEVICE_DELETED (object-del of its
// backend). Throws DiagnosticError when none matches.
struct MemoryDetachPlan {
  DetachPlan detach;          // element "memory", id dimm<slot>, release, running_line
  std::string memdev;
  uint64_t size_bytes = 0;    // as the running definition gives it (what <memory> loses)
};
MemoryDetachPlan PlanMemoryDetach(const domain::DomainDef& running, const nlohmann::json& memory_devices,
                                  const domain::DeviceFragment& fragment);

}  // namespace qlaunch::qemu
