// <devices>: emulator, memballoon, disks, serial/console character devices, memory devices.
#include <algorithm>

#include "domain/parse_sections.h"

namespace qlaunch::domain {

namespace {

bool OneOf(std::string_view value, std::initializer_list<std::string_view> choices) {
  return std::find(choices.begin(), choices.end(), value) != choices.end();
}

std::string Join(std::initializer_list<std::string_view> choices) {
  std::string out;
  for (std::string_view c : choices) out += (out.empty() ? "" : "|") + std::string(c);
  return out;
}

// A value is either supported, known to libvirt but unsupported here (reported, element skipped),
// or invalid (error).
enum class Support { kYes, kNo };

Support Classify(ParseContext& ctx, const xmlNode* node, std::string_view what, const std::string& value,
                 std::initializer_list<std::string_view> supported,
                 std::initializer_list<std::string_view> libvirt_only) {
  if (OneOf(value, supported)) return Support::kYes;
  if (OneOf(value, libvirt_only)) {
    ctx.Unsupported(node, std::string(what) + " '" + value + "' not supported by qlaunch (supported: " +
                              Join(supported) + "), element ignored");
    return Support::kNo;
  }
  ctx.Fail(node, "unknown " + std::string(what) + " '" + value + "' (expected " + Join(supported) + ")");
}

std::optional<std::string> InferDiskBus(std::string_view dev) {
  if (dev.starts_with("vd")) return "virtio";
  if (dev.starts_with("hd")) return "ide";
  if (dev.starts_with("sd")) return "scsi";
  return std::nullopt;
}

std::optional<Disk> ParseDisk(ParseContext& ctx, const xmlNode* node) {
  Disk disk;
  disk.line = NodeLine(node);
  disk.type = NodeAttr(node, "type").value_or("file");
  if (Classify(ctx, node, "disk type", disk.type, {"file", "block"},
               {"dir", "network", "volume", "nvme", "vhostuser"}) == Support::kNo)
    return std::nullopt;
  disk.device = NodeAttr(node, "device").value_or("disk");
  if (Classify(ctx, node, "disk device", disk.device, {"disk", "cdrom"}, {"floppy", "lun"}) == Support::kNo)
    return std::nullopt;
  if (const xmlNode* driver = UniqueChild(ctx, node, "driver")) {
    std::string name = NodeAttr(driver, "name").value_or("qemu");
    if (name != "qemu") ctx.Fail(driver, "unknown disk driver name '" + name + "' (expected qemu)");
    disk.driver_type = NodeAttr(driver, "type").value_or("raw");
  }
  if (const xmlNode* source = UniqueChild(ctx, node, "source"))
    disk.source = NodeAttr(source, disk.type == "block" ? "dev" : "file").value_or("");
  const xmlNode* target = UniqueChild(ctx, node, "target");
  if (!target) ctx.Fail(node, "missing <target> in disk");
  disk.target_dev = RequiredAttr(ctx, target, "dev");
  disk.target_bus = NodeAttr(target, "bus").value_or(InferDiskBus(disk.target_dev).value_or(""));
  if (disk.target_bus.empty()) ctx.Fail(target, "cannot infer the bus of disk '" + disk.target_dev + "'; set bus=");
  if (Classify(ctx, target, "disk bus", disk.target_bus, {"virtio", "ide", "sata", "scsi"},
               {"fdc", "usb", "xen", "uml", "sd", "none"}) == Support::kNo)
    return std::nullopt;
  disk.readonly = UniqueChild(ctx, node, "readonly") != nullptr;
  return disk;
}

std::optional<CharDev> ParseCharDev(ParseContext& ctx, const xmlNode* node) {
  CharDev chr;
  chr.line = NodeLine(node);
  chr.kind = NodeName(node);
  chr.type = NodeAttr(node, "type").value_or("pty");
  if (Classify(ctx, node, chr.kind + " type", chr.type, {"pty", "file", "null", "stdio", "unix"},
               {"vc", "dev", "pipe", "tcp", "udp", "spicevmc", "spiceport", "nmdm", "qemu-vdagent", "dbus"}) ==
      Support::kNo)
    return std::nullopt;
  if (const xmlNode* source = UniqueChild(ctx, node, "source")) chr.path = NodeAttr(source, "path").value_or("");
  if ((chr.type == "file" || chr.type == "unix") && chr.path.empty())
    ctx.Fail(node, "Missing source path attribute for char device");
  if (const xmlNode* target = UniqueChild(ctx, node, "target")) chr.target_type = NodeAttr(target, "type").value_or("");
  return chr;
}

std::string ParseMemballoon(ParseContext& ctx, const xmlNode* node) {
  std::string model = RequiredAttr(ctx, node, "model");
  if (Classify(ctx, node, "memballoon model", model, {"virtio", "none"},
               {"virtio-transitional", "virtio-non-transitional", "xen"}) == Support::kNo)
    return "";
  return model;
}

}  // namespace

Devices ParseDevices(ParseContext& ctx, const xmlNode* node) {
  Devices devices;
  if (const xmlNode* emulator = UniqueChild(ctx, node, "emulator")) {
    devices.emulator = NodeText(emulator);
    devices.emulator_line = NodeLine(emulator);
  }
  if (const xmlNode* balloon = UniqueChild(ctx, node, "memballoon")) {
    std::string model = ParseMemballoon(ctx, balloon);
    if (!model.empty()) devices.memballoon_model = model;
  }
  for (const xmlNode* child : ElementChildren(node)) {
    std::string name = NodeName(child);
    if (name == "disk") {
      if (auto disk = ParseDisk(ctx, child)) devices.disks.push_back(std::move(*disk));
    } else if (name == "serial" || name == "console") {
      if (auto chr = ParseCharDev(ctx, child)) devices.chardevs.push_back(std::move(*chr));
    } else if (name == "memory") {
      if (auto mem = ParseMemoryDevice(ctx, child)) devices.memory.push_back(std::move(*mem));
    } else if (name == "panic") {
      std::string model = NodeAttr(child, "model").value_or("isa");
      if (Classify(ctx, child, "panic model", model, {"isa"}, {"pseries", "hyperv", "s390", "pvpanic"}) ==
          Support::kYes) {
        if (devices.panic) ctx.Fail(child, "more than one <panic model='isa'>");
        devices.panic = true;
        devices.panic_line = NodeLine(child);
      }
    }
  }
  return devices;
}

}  // namespace qlaunch::domain
