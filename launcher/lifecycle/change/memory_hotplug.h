// attach-device of a <memory model='dimm'|'virtio-mem'> (hotplug.h calls it for a memory element):
// the device planned by qemu_cmd/memory_hotplug_plan, checked against the hugepage pools under the
// pool lock as a start is (virtio-mem: the pages its <requested> size takes), then
//   - a shared hugetlb memfd: filled by qlaunch's pinned, NUMA-local workers while the guest runs
//     on untouched (QEMU's lock is not held), handed to QEMU with add-fd, object-add of a
//     memory-backend-file on it with prealloc=false, remove-fd, device_add pc-dimm;
//   - any other backend: object-add (QEMU preallocates, with a thread-context on the backend's
//     nodes, unless the sandbox forbids it), device_add;
//   - virtio-mem: object-add of a backend that reserves and preallocates nothing, device_add of
//     virtio-mem-pci on a free hotpluggable PCI slot (the device preallocates each block the
//     guest plugs; which blocks, only the guest knows, so there is nothing to fill ahead).
// On any failure the commands run are undone (object-del, remove-fd) and every page goes back:
// the guest is as it was. The running definition gains the element and a <memory> that counts
// it; plan.json its backend and memory device (dominfo, dumpxml).
// Detach: once QEMU has let a memory device go, FinishMemoryDetach (change_recovery.cc calls it)
// gives its pages back and takes it out of the running definition.
// DIMM and virtio-mem share this one path: qemu_cmd/memory_hotplug_plan decides every difference
// between them (backend, device, slot), so each step here is the same for both.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "domain/parse_fragment.h"
#include "launcher/lifecycle/change/hotplug.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

HotplugResult AttachMemoryDevice(const std::string& name, DomainSession& session, RunningState& st,
                                 const domain::DeviceFragment& fragment, const HotplugOptions& opts);

// A memory device QEMU no longer has, from its detach record `mem` (change.json's "memory":
// line, memdev, memory_bytes_after): a DIMM QEMU was started with gives its inherited memfd's
// pages back to the pool; its element leaves the running definition `st` of the domain in `dir`,
// its backend and device plan.json, and <memory> no longer counts it.
void FinishMemoryDetach(const std::filesystem::path& dir, RunningState* st, const std::string& id,
                        const nlohmann::json& mem);

}  // namespace qlaunch::launcher
