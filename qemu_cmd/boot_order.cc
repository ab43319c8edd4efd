#include "qemu_cmd/boot_order.h"

#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

BootIndexes PlanBootIndexes(const domain::DomainDef& def) {
  BootIndexes out;
  const domain::Devices& devs = def.devices;
  std::map<unsigned, int> seen;  // order -> line of the first device with it
  auto take = [&](std::map<size_t, unsigned>* to, size_t i, const std::optional<unsigned>& order, int line,
                  const char* element) {
    if (!order) return;
    if (auto [it, fresh] = seen.emplace(*order, line); !fresh)
      throw DiagnosticError(PlanError(def, line, element,
                                      "boot order " + std::to_string(*order) + " is already used by the device at line " +
                                          std::to_string(it->second)));
    (*to)[i] = *order;
  };
  for (size_t i = 0; i < devs.disks.size(); ++i)
    take(&out.disks, i, devs.disks[i].boot_order, devs.disks[i].line, "disk");
  for (size_t i = 0; i < devs.interfaces.size(); ++i)
    take(&out.nets, i, devs.interfaces[i].boot_order, devs.interfaces[i].line, "interface");
  if (!seen.empty()) {
    if (!def.os.boot.empty())
      throw DiagnosticError(PlanError(def, def.os.line, "boot",
                                      "per-device boot elements cannot be used together with os/boot elements"));
    return out;
  }
  // Without any <boot>, libvirt boots from the first disk (<boot dev='hd'/>), kernel or not.
  static const std::vector<std::string> kDefault = {"hd"};
  unsigned next = 1;
  for (const std::string& dev : def.os.boot.empty() ? kDefault : def.os.boot) {
    if (dev == "hd" || dev == "cdrom") {
      const std::string want = dev == "hd" ? "disk" : "cdrom";
      for (size_t i = 0; i < devs.disks.size(); ++i)
        if (devs.disks[i].device == want) {
          if (out.disks.emplace(i, next).second) ++next;
          break;
        }
    } else if (dev == "network" && !devs.interfaces.empty()) {
      if (out.nets.emplace(0, next).second) ++next;
    }
  }
  return out;
}

}  // namespace qlaunch::qemu
