// <disk>: file and block disks and cdroms, their driver, source, target, and flags.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

namespace {

std::optional<std::string> InferDiskBus(std::string_view dev) {
  if (dev.starts_with("vd")) return "virtio";
  if (dev.starts_with("hd")) return "ide";
  if (dev.starts_with("sd")) return "scsi";
  return std::nullopt;
}

}  // namespace

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

std::span<const UnderstoodElement> UnderstoodDiskElements() {
  static constexpr UnderstoodElement kElements[] = {
    {"domain/devices/disk", "type device"},
    {"domain/devices/disk/driver", "name type"},
    {"domain/devices/disk/source", "file dev"},
    {"domain/devices/disk/target", "dev bus"},
    {"domain/devices/disk/readonly", ""},
  };
  return kElements;
}

}  // namespace qlaunch::domain
