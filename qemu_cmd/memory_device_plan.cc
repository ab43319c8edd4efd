// The memory family of the device plan: each <memory> device in document order, after the
// controllers, as libvirt 9.0 renders them. Its backend (-object, with the thread-context it is
// the first user of) was decided with the rest of the memory (qemu_cmd/memory_plan.cc) and
// rendered by RenderArgv; here it is placed. A DIMM is not a PCI device: its -device follows its
// backend as it is. virtio-mem is a virtio-mem-pci device, placed on PCI after the virtio inputs
// as libvirt places it.
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/memory_plan.h"
#include "qemu_cmd/render_object.h"

namespace qlaunch::qemu {

void PlanMemoryDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  if (ctx.memory == nullptr) return;
  for (const MemoryDeviceArg& m : ctx.memory->devices) {
    PlannedDevice d;
    d.family = "memory";
    d.id = m.id;
    if (ctx.memory_backend_args != nullptr)
      if (auto it = ctx.memory_backend_args->find(m.memdev); it != ctx.memory_backend_args->end())
        d.host_args = it->second;
    if (m.driver != "virtio-mem-pci") {
      // Rendered as it always was (libvirt's key order); the live XML gives a DIMM its slot
      // and base from plan.json's memory_devices, not from this record.
      d.host_args.push_back({"-device", RenderMemoryDevice(m)});
      out->push_back(std::move(d));
      continue;
    }
    d.element = "memory";
    d.line = m.line;
    d.driver = m.driver;
    d.props.emplace_back("node", std::to_string(m.node));
    d.props.emplace_back("block-size", std::to_string(m.block_size));
    if (m.requested_size) d.props.emplace_back("requested-size", std::to_string(*m.requested_size));
    d.props.emplace_back("memdev", m.memdev);
    if (m.prealloc) d.props.emplace_back("prealloc", "on");
    d.AtPci(PciRank::kMemory, m.pci_address);
    out->push_back(std::move(d));
  }
}

}  // namespace qlaunch::qemu
