// <disk> as libvirt 9.0 renders it with -blockdev: per disk with a source a storage node
// ("file" / "host_device") and a format node ("raw" / "qcow2") on top of it, then the frontend
// -device that names the format node. An empty cdrom is a frontend without drive=.
#include "qemu_cmd/disk_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "qemu_cmd/boot_order.h"
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/graphics_plan.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {

namespace {

using domain::Disk;
using domain::DomainDef;
using Json = nlohmann::ordered_json;  // libvirt's key order, for argv that reads like libvirt's

[[noreturn]] void Fail(const DomainDef& def, const Disk& d, const std::string& message) {
  throw DiagnosticError(PlanError(def, d.line, "disk", message));
}

std::string Str(unsigned v) { return std::to_string(v); }

// cache= as the node options libvirt gives both nodes, and the device's write-cache.
struct CacheMode {
  bool direct, no_flush, write_cache;
};
std::optional<CacheMode> CacheOf(const Disk& d) {
  std::string cache = d.cache;
  // libvirt gives a writable shared disk cache='none' unless the XML picks a mode.
  if (cache.empty() && d.shareable && !d.readonly && d.device != "cdrom") cache = "none";
  if (cache == "none") return CacheMode{true, false, true};
  if (cache == "writethrough") return CacheMode{false, false, false};
  if (cache == "writeback") return CacheMode{false, false, true};
  if (cache == "directsync") return CacheMode{true, false, false};
  if (cache == "unsafe") return CacheMode{false, true, true};
  return std::nullopt;
}

// A JSON option value; strings from the XML are valid UTF-8 (libxml2 checked it), a model
// built otherwise may not be.
std::string Dump(const DomainDef& def, const Disk& d, const Json& j) {
  try {
    return j.dump();
  } catch (const nlohmann::json::exception&) {
    throw DiagnosticError(PlanError(def, d.line, "disk", "the disk's source is not valid UTF-8"));
  }
}

void AddBlockdevs(const DomainDef& def, const Disk& d, const std::string& node, PlannedDevice* p) {
  const DiskBlockdevNodes nodes = DiskBlockdevs(d, node);
  p->host_args.push_back({"-blockdev", Dump(def, d, nodes.storage)});
  p->host_args.push_back({"-blockdev", Dump(def, d, nodes.format)});
}

// The scsi controller with this index (libvirt numbers those without index= by the lowest
// free one, in document order) uses lsi addressing: no model, or lsilogic (QEMU's lsi, also
// libvirt's default for a controller it adds itself).
bool ScsiControllerIsLsi(const DomainDef& def, unsigned index) {
  std::set<unsigned> used;
  for (const domain::Controller& c : def.devices.controllers) {
    if (c.type != "scsi") continue;
    unsigned i = 0;
    if (c.index) {
      i = *c.index;
    } else {
      while (used.count(i)) ++i;
    }
    used.insert(i);
    if (i == index) return c.model.empty() || c.model == "lsilogic" || c.model == "auto";
  }
  return true;
}

// The frontend: driver, id, bus and the bus address properties (`usb`: the port of a usb disk).
void SetFrontend(const DeviceContext& ctx, const Disk& d, const UsbPort* usb, PlannedDevice* p) {
  const DomainDef& def = *ctx.def;
  const bool cdrom = d.device == "cdrom";
  auto prop = [&](std::string key, std::string value) { p->props.emplace_back(std::move(key), std::move(value)); };
  if (d.target_bus == "virtio") {
    if (cdrom) Fail(def, d, "disk type of '" + d.target_dev + "' does not support ejectable media (a cdrom on virtio)");
    p->driver = "virtio-blk-pci";
    p->id = "virtio-disk" + std::to_string(domain::DiskNameToIndex(d.target_dev));
    p->pci = true;
    p->rank = PciRank::kDisk;
    p->address = d.address;
    return;
  }
  if (d.target_bus == "usb") {
    // libvirt 9.0: usb-storage on the port the USB assignment gave it (qemu_cmd/input_plan.cc).
    if (cdrom) Fail(def, d, "a cdrom on the usb bus is not supported by qlaunch (use bus='sata' or 'scsi')");
    p->driver = "usb-storage";
    p->id = "usb-disk" + std::to_string(domain::DiskNameToIndex(d.target_dev));
    prop("bus", usb->bus);
    prop("port", usb->port);
    return;
  }
  const DriveAddress a = *DiskDriveAddress(d);
  if (d.target_bus == "ide") {
    if (ctx.q35) Fail(def, d, "IDE controllers are unsupported for this QEMU binary or machine type (use bus='sata')");
    if (a.controller != 0) Fail(def, d, "Only 1 IDE controller is supported");
    if (a.target != 0) Fail(def, d, "target must be 0 for ide controller");
    if (a.bus > 1) Fail(def, d, "IDE bus " + Str(a.bus) + " does not exist (the built-in IDE has buses 0 and 1)");
    if (a.unit > 1) Fail(def, d, "IDE unit " + Str(a.unit) + " does not exist (an IDE bus has units 0 and 1)");
    if (d.readonly && !cdrom) Fail(def, d, "readonly ide disks are not supported");
    p->driver = cdrom ? "ide-cd" : "ide-hd";
    p->id = "ide" + Str(a.controller) + "-" + Str(a.bus) + "-" + Str(a.unit);
    prop("bus", "ide." + Str(a.bus));
    prop("unit", Str(a.unit));
  } else if (d.target_bus == "sata") {
    if (a.bus != 0) Fail(def, d, "bus must be 0 for sata controller");
    if (a.target != 0) Fail(def, d, "target must be 0 for sata controller");
    if (a.unit > 5) Fail(def, d, "SATA unit " + Str(a.unit) + " does not exist (an AHCI controller has units 0 to 5)");
    if (d.readonly && !cdrom) Fail(def, d, "readonly sata disks are not supported");
    p->driver = cdrom ? "ide-cd" : "ide-hd";
    p->id = "sata" + Str(a.controller) + "-0-" + Str(a.unit);
    // q35's built-in ICH9 AHCI is sata0 to libvirt, but QEMU names its buses ide.N.
    prop("bus", (ctx.q35 && a.controller == 0 ? "ide." : "sata" + Str(a.controller) + ".") + Str(a.unit));
  } else if (d.target_bus == "scsi") {
    p->driver = cdrom ? "scsi-cd" : "scsi-hd";
    const std::string c = Str(a.controller);
    if (ScsiControllerIsLsi(def, a.controller)) {
      if (a.target != 0) Fail(def, d, "target must be 0 for controller model 'lsilogic'");
      p->id = "scsi" + c + "-" + Str(a.bus) + "-" + Str(a.unit);
      prop("bus", "scsi" + c + "." + Str(a.bus));
      prop("scsi-id", Str(a.unit));
    } else {
      p->id = "scsi" + c + "-" + Str(a.bus) + "-" + Str(a.target) + "-" + Str(a.unit);
      prop("bus", "scsi" + c + ".0");
      prop("channel", Str(a.bus));
      prop("scsi-id", Str(a.target));
      prop("lun", Str(a.unit));
    }
    prop("device_id", "drive-" + p->id);
  } else {
    throw DiagnosticError(PlanError(def, d.line, "target", "disk bus '" + d.target_bus + "' is not supported"));
  }
}

// libvirt's check of <serial> (qemuValidateDomainDeviceDefDiskSerial) and its escaping of
// spaces with a backslash, which QEMU keeps in the serial.
std::string SerialOf(const DomainDef& def, const Disk& d) {
  std::string out;
  for (char c : d.serial) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view(" -_.+").find(c) != std::string_view::npos;
    if (!ok)
      throw DiagnosticError(PlanError(def, d.line, "serial",
                                      "driver serial '" + d.serial +
                                          "' contains unsafe characters (allowed: letters, digits, space, - _ . +)"));
    if (c == ' ') out += '\\';
    out += c;
  }
  return out;
}

// Two disks with one target name, or on one drive address, are errors naming both lines.
void CheckUnique(const DomainDef& def) {
  std::map<std::string, const Disk*> targets;
  std::map<std::pair<std::string, std::tuple<unsigned, unsigned, unsigned, unsigned>>, const Disk*> drives;
  for (const Disk& d : def.devices.disks) {
    if (auto [it, fresh] = targets.emplace(d.target_dev, &d); !fresh)
      throw DiagnosticError(PlanError(def, d.line, "disk",
                                      "target '" + d.target_dev + "' duplicated for disk sources '" +
                                          it->second->source + "' (line " + std::to_string(it->second->line) +
                                          ") and '" + d.source + "'"));
    std::optional<DriveAddress> a = DiskDriveAddress(d);
    if (!a) continue;
    auto key = std::make_pair(d.target_bus, std::make_tuple(a->controller, a->bus, a->target, a->unit));
    // libvirt names the first of the two (in its disk order); the error points at it too.
    if (auto [it, fresh] = drives.emplace(key, &d); !fresh)
      throw DiagnosticError(PlanError(
          def, it->second->line, "disk",
          "Found duplicate drive address for disk with target name '" + it->second->target_dev + "' controller='" +
              Str(a->controller) + "' bus='" + Str(a->bus) + "' target='" + Str(a->target) + "' unit='" +
              Str(a->unit) + "': disk '" + d.target_dev + "' at line " + std::to_string(d.line) + " has it too"));
  }
}

}  // namespace

std::optional<DriveAddress> DiskDriveAddress(const Disk& disk) {
  if (disk.target_bus != "ide" && disk.target_bus != "sata" && disk.target_bus != "scsi") return std::nullopt;
  DriveAddress a;
  if (disk.address.type == "drive") {
    a.controller = disk.address.controller.value_or(0);
    a.bus = disk.address.drive_bus.value_or(0);
    a.target = disk.address.target.value_or(0);
    a.unit = disk.address.unit.value_or(0);
    return a;
  }
  const int index = domain::DiskNameToIndex(disk.target_dev);
  const unsigned idx = index < 0 ? 0 : static_cast<unsigned>(index);  // the parser refuses such names
  if (disk.target_bus == "ide") {
    a.controller = idx / 4;
    a.bus = (idx % 4) / 2;
    a.unit = idx % 2;
  } else if (disk.target_bus == "sata") {
    a.controller = idx / 6;
    a.unit = idx % 6;
  } else {
    a.controller = idx / 7;
    a.unit = idx % 7;
  }
  return a;
}

DiskBlockdevNodes DiskBlockdevs(const Disk& d, const std::string& node) {
  const std::optional<CacheMode> cache = CacheOf(d);
  Json cache_json;
  if (cache) cache_json = {{"direct", cache->direct}, {"no-flush", cache->no_flush}};
  DiskBlockdevNodes out;
  Json& storage = out.storage;
  storage["driver"] = d.type == "block" ? "host_device" : "file";
  storage["filename"] = d.source;
  if (!d.io.empty()) storage["aio"] = d.io;
  storage["node-name"] = node + "-storage";
  if (cache) storage["cache"] = cache_json;
  storage["auto-read-only"] = true;
  storage["discard"] = "unmap";  // the format node decides
  Json& format = out.format;
  format["node-name"] = node + "-format";
  format["read-only"] = d.readonly || d.device == "cdrom";
  if (!d.discard.empty()) format["discard"] = d.discard;
  if (cache) format["cache"] = cache_json;
  format["driver"] = d.driver_type;
  format["file"] = node + "-storage";
  return out;
}

std::string DiskNodeName(const DomainDef& def, size_t index) {
  return "libvirt-" + std::to_string(def.devices.disks.size() - index);
}

void PlanDiskDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const DomainDef& def = *ctx.def;
  CheckUnique(def);
  const BootIndexes boot = PlanBootIndexes(def);
  UsbPorts usb;
  if (std::any_of(def.devices.disks.begin(), def.devices.disks.end(), [](const Disk& d) { return d.target_bus == "usb"; }))
    usb = AssignUsbPorts(ctx);
  for (size_t i = 0; i < def.devices.disks.size(); ++i) {
    const Disk& d = def.devices.disks[i];
    const std::optional<CacheMode> cache = CacheOf(d);
    if (d.io == "native" && !(cache && cache->direct))
      throw DiagnosticError(PlanError(def, d.line, "disk",
                                      "io='native' needs either no disk cache or directsync cache mode"));
    if (d.shareable && !d.readonly && d.device != "cdrom" && d.driver_type != "raw")
      throw DiagnosticError(PlanError(def, d.line, "disk",
                                      "shared access for disk '" + d.target_dev +
                                          "' requires use of supported storage format (raw)"));
    PlannedDevice p;
    p.family = "disk";
    p.element = "disk";
    p.line = d.line;
    const std::string node = DiskNodeName(def, i);
    if (!d.source.empty()) AddBlockdevs(def, d, node, &p);
    auto port = usb.disks.find(i);
    SetFrontend(ctx, d, port == usb.disks.end() ? nullptr : &port->second, &p);
    if (d.shareable) p.props.emplace_back("share-rw", "on");
    if (!d.source.empty()) p.props.emplace_back("drive", node + "-format");
    if (auto it = boot.disks.find(i); it != boot.disks.end()) p.props.emplace_back("bootindex", Str(it->second));
    if (cache) p.props.emplace_back("write-cache", cache->write_cache ? "on" : "off");
    if (!d.serial.empty()) p.props.emplace_back("serial", SerialOf(def, d));
    if (d.target_bus == "usb") p.props.emplace_back("removable", "off");
    out->push_back(std::move(p));
  }
}

}  // namespace qlaunch::qemu
