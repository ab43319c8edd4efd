#include "qemu_cmd/net_plan.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "qemu_cmd/boot_order.h"
#include "qemu_cmd/launch_plan.h"
#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

// FNV-1a, 64 bits: small, fixed, the same on every host and build.
uint64_t Fnv1a(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

int FdOf(const DeviceContext& ctx, size_t i) {
  const auto& fds = ctx.opts ? ctx.opts->devices.net_fds : std::vector<int>{};
  return i < fds.size() ? fds[i] : -1;
}

// -netdev for interface i: the tap fd qlaunch opened when there is one; without one (no
// resources: domxml-to-native) what QEMU can do on its own.
std::string NetdevArg(const DeviceContext& ctx, const domain::Interface& nic, size_t i) {
  const std::string id = "hostnet" + std::to_string(i);
  if (nic.type == "user") return KeyValueBuilder("user").Add("id", std::string_view(id)).str();
  if (int fd = FdOf(ctx, i); fd >= 0) return KeyValueBuilder("tap").Add("fd", fd).Add("id", std::string_view(id)).str();
  // QEMU opens the tap itself; for a bridge it is left for the user to attach (-netdev bridge
  // would spawn qemu-bridge-helper, which -sandbox spawn=deny forbids).
  KeyValueBuilder tap("tap");
  tap.Add("id", std::string_view(id));
  if (!nic.target_dev.empty()) tap.Add("ifname", std::string_view(nic.target_dev));
  tap.Add("script", "no").Add("downscript", "no");
  return tap.str();
}

}  // namespace

std::string DerivedMac(const domain::DomainDef& def, size_t index, const std::vector<std::string>& taken) {
  const std::string key = (def.uuid.empty() ? "name:" + def.name : "uuid:" + def.uuid) + "/" + std::to_string(index);
  for (unsigned attempt = 0;; ++attempt) {
    uint64_t h = Fnv1a("qlaunch-mac/" + key + "/" + std::to_string(attempt));
    char mac[18];
    std::snprintf(mac, sizeof mac, "52:54:00:%02x:%02x:%02x", static_cast<unsigned>(h >> 16 & 0xff),
                  static_cast<unsigned>(h >> 8 & 0xff), static_cast<unsigned>(h & 0xff));
    if (std::find(taken.begin(), taken.end(), mac) == taken.end()) return mac;
  }
}

std::vector<std::string> InterfaceMacs(const domain::DomainDef& def) {
  const auto& nics = def.devices.interfaces;
  std::vector<std::string> taken;
  for (const auto& nic : nics)
    if (!nic.mac.empty()) taken.push_back(nic.mac);
  std::vector<std::string> macs(nics.size());
  for (size_t i = 0; i < nics.size(); ++i) {
    if (!nics[i].mac.empty()) {
      macs[i] = nics[i].mac;
      continue;
    }
    macs[i] = DerivedMac(def, i, taken);
    taken.push_back(macs[i]);
  }
  return macs;
}

std::string NicDriver(const std::string& model) { return model == "virtio" ? "virtio-net-pci" : model; }

std::vector<std::string> LinkDownNicIds(const domain::DomainDef& def) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < def.devices.interfaces.size(); ++i)
    if (!def.devices.interfaces[i].link_up) ids.push_back("net" + std::to_string(i));
  return ids;
}

std::vector<Diagnostic> NetPlanNotes(const DeviceContext& ctx) {
  std::vector<Diagnostic> notes;
  const auto& nics = ctx.def->devices.interfaces;
  for (size_t i = 0; i < nics.size(); ++i) {
    const domain::Interface& nic = nics[i];
    if (nic.type == "user" || FdOf(ctx, i) >= 0) continue;
    const std::string tap = nic.target_dev.empty() ? "the tap QEMU names tapN" : "tap '" + nic.target_dev + "'";
    std::string what = "-netdev tap,script=no: QEMU opens " + tap + " itself (needs CAP_NET_ADMIN)";
    if (nic.type == "bridge")
      what += " and nothing attaches it to bridge '" + nic.source_bridge + "' (ip link set TAP master " +
              nic.source_bridge + " up)";
    what += "; `qlaunch start` opens the tap, sets it up as libvirt does and passes fd=";
    notes.push_back(PlanWarning(*ctx.def, nic.line, "interface", "hostnet" + std::to_string(i) + ": " + what));
  }
  return notes;
}

void PlanNetDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const domain::DomainDef& def = *ctx.def;
  const std::vector<std::string> macs = InterfaceMacs(def);
  const BootIndexes boot = PlanBootIndexes(def);
  for (size_t i = 0; i < def.devices.interfaces.size(); ++i) {
    const domain::Interface& nic = def.devices.interfaces[i];
    PlannedDevice d;
    d.family = "net";
    d.element = "interface";
    d.line = nic.line;
    d.host_args.push_back({"-netdev", NetdevArg(ctx, nic, i)});
    d.driver = NicDriver(nic.model);
    d.id = "net" + std::to_string(i);
    d.props.push_back({"netdev", "hostnet" + std::to_string(i)});
    d.props.push_back({"mac", macs[i]});
    if (auto it = boot.nets.find(i); it != boot.nets.end()) d.props.push_back({"bootindex", std::to_string(it->second)});
    d.AtPci(PciRank::kNet, nic.address);
    out->push_back(std::move(d));
  }
}

}  // namespace qlaunch::qemu
