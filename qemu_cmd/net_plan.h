// The net family: each <interface> as libvirt 9.0 starts it, a -netdev (user, or tap on the fd
// `qlaunch start` opened) followed by its NIC -device (qemu_cmd/net_plan.cc).
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "qemu_cmd/device_plan.h"

namespace qlaunch::qemu {

// The MAC of interface `index` when the XML gives none. libvirt draws a random one in
// 52:54:00:xx:xx:xx when the domain is defined; qlaunch has no define step, so the MAC is
// derived from the domain's uuid (its name when it has none) and the index: stable across
// starts, list and dominfo, in libvirt's range. `taken` (MACs already in use by the domain)
// are skipped.
std::string DerivedMac(const domain::DomainDef& def, size_t index, const std::vector<std::string>& taken);

// Every interface's MAC in document order: the XML's, or DerivedMac (never two alike).
std::vector<std::string> InterfaceMacs(const domain::DomainDef& def);

// The QEMU device type of a <model type> ("virtio" -> "virtio-net-pci").
std::string NicDriver(const std::string& model);

// The NIC ids ("net2") whose <link state='down'/> libvirt applies after QEMU starts
// (QMP set_link {"name": id, "up": false}); QEMU has no option for it on the command line.
std::vector<std::string> LinkDownNicIds(const domain::DomainDef& def);

// Notes for an argv without resources (domxml-to-native): what QEMU must do alone for the
// taps and bridges.
std::vector<Diagnostic> NetPlanNotes(const DeviceContext& ctx);

}  // namespace qlaunch::qemu
