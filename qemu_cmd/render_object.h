// Rendering of the memory-related options: the values of -object (memory backends and
// thread-contexts), -numa node and the -device of a DIMM/NVDIMM. With caps.json_object the
// -object values are compact JSON with keys in libvirt's order; otherwise QEMU 5.2's
// key=value syntax (booleans on/off, lists as ranges with the key repeated per run).
#pragma once

#include <string>

#include "common/id_set.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::qemu {

// The argument that follows "-object".
std::string RenderBackendObject(const MemoryBackend& b, const QemuCaps& caps);
std::string RenderThreadContextObject(const ThreadContext& tc, const QemuCaps& caps);
// The argument that follows "-numa": node,nodeid=N[,cpus=a-b...],memdev=ID.
std::string RenderNumaNode(unsigned node_id, const IdSet& cpus, const std::string& memdev);
// The argument that follows "-device" for a memory device.
std::string RenderMemoryDevice(const MemoryDeviceArg& d);

}  // namespace qlaunch::qemu
