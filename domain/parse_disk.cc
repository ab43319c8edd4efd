// <disk>: file and block disks and cdroms, their driver, source, target, flags, boot order and
// address, as libvirt 9.0 reads them.
#include <algorithm>
#include <cctype>

#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

namespace {

constexpr std::string_view kNamePrefixes[] = {"fd", "hd", "vd", "sd", "xvd", "ubd"};

// libvirt's bus for a target without bus= (virDomainDiskDefParseXML): by the name's prefix,
// IDE when the prefix says nothing.
std::string InferDiskBus(std::string_view dev) {
  if (dev.starts_with("hd")) return "ide";
  if (dev.starts_with("sd")) return "scsi";
  if (dev.starts_with("vd")) return "virtio";
  if (dev.starts_with("xvd")) return "xen";
  if (dev.starts_with("ubd")) return "uml";
  return "ide";
}

bool EndsWithDigit(std::string_view s) { return !s.empty() && std::isdigit(static_cast<unsigned char>(s.back())); }

// "default" is libvirt's spelling of "not set".
std::string Optional(ParseContext& ctx, const xmlNode* node, const char* attr,
                     std::initializer_list<std::string_view> values) {
  std::optional<std::string> v = NodeAttr(node, attr);
  if (!v || *v == "default") return "";
  Classify(ctx, node, std::string("disk driver ") + attr, *v, values, {});
  return *v;
}

}  // namespace

int DiskNameToIndex(std::string_view name) {
  size_t i = 0;
  for (std::string_view pre : kNamePrefixes)
    if (name.starts_with(pre)) {
      i = pre.size();
      break;
    }
  if (i == 0 || i >= name.size()) return -1;
  long idx = 0;
  for (; i < name.size(); ++i) {
    char c = name[i];
    if (c < 'a' || c > 'z') return -1;  // partitions ("vda1") and anything else
    idx = idx * 26 + (c - 'a' + 1);
    if (idx > 1 << 20) return -1;
  }
  return static_cast<int>(idx - 1);
}

void InsertDisk(std::vector<Disk>* disks, Disk disk) {
  // virDomainDiskInsert, walking backwards from the end.
  std::optional<size_t> at;
  const int index = DiskNameToIndex(disk.target_dev);
  for (size_t i = disks->size(); i-- > 0;) {
    const Disk& d = (*disks)[i];
    if (d.target_bus != disk.target_bus) continue;
    if (DiskNameToIndex(d.target_dev) > index)
      at = i;
    else if (!at)
      at = i + 1;
  }
  disks->insert(at ? disks->begin() + static_cast<long>(*at) : disks->end(), std::move(disk));
}

std::optional<Disk> ParseDisk(ParseContext& ctx, const xmlNode* node) {
  Disk disk;
  disk.line = NodeLine(node);
  disk.type = NodeAttr(node, "type").value_or("file");
  if (Classify(ctx, node, "disk type", disk.type, {"file", "block"},
               {"dir", "network", "volume", "nvme", "vhostuser", "vhostvdpa"}) == Support::kNo)
    return std::nullopt;
  disk.device = NodeAttr(node, "device").value_or("disk");
  if (Classify(ctx, node, "disk device", disk.device, {"disk", "cdrom"}, {"floppy", "lun"}) == Support::kNo)
    return std::nullopt;

  const xmlNode* target = UniqueChild(ctx, node, "target");
  if (!target) ctx.Fail(node, "missing <target> in disk");
  disk.target_dev = RequiredAttr(ctx, target, "dev");
  disk.target_bus = NodeAttr(target, "bus").value_or(InferDiskBus(disk.target_dev));
  if (Classify(ctx, target, "disk bus", disk.target_bus, {"virtio", "ide", "sata", "scsi", "usb"},
               {"fdc", "xen", "uml", "sd", "none"}) == Support::kNo)
    return std::nullopt;
  disk.address = ParseAddress(ctx, node);
  // The target name: libvirt derives the alias (virtio) and the drive address from it.
  const bool known_prefix = std::any_of(std::begin(kNamePrefixes), std::end(kNamePrefixes),
                                        [&](std::string_view p) { return disk.target_dev.starts_with(p); });
  if (known_prefix && EndsWithDigit(disk.target_dev))
    ctx.Fail(target, "invalid disk target '" + disk.target_dev + "', partitions can't appear in disk targets");
  if (DiskNameToIndex(disk.target_dev) < 0 && (disk.target_bus == "virtio" || disk.address.type != "drive"))
    ctx.Fail(target, "Unknown disk name '" + disk.target_dev + "' and no address specified");

  const std::string& at = disk.address.type;
  const xmlNode* where = disk.address.type.empty() ? node : UniqueChild(ctx, node, "address");
  if (disk.target_bus == "virtio" && !at.empty() && at != "pci")
    ctx.Fail(where, "virtio disk cannot have an address of type '" + at + "'");
  if (disk.target_bus != "virtio" && !at.empty() && at != "drive")
    ctx.Fail(where, "Invalid address type '" + at + "' for the disk '" + disk.target_dev + "' with the bus type '" +
                        disk.target_bus + "'");

  if (const xmlNode* driver = UniqueChild(ctx, node, "driver")) {
    std::string name = NodeAttr(driver, "name").value_or("qemu");
    if (name != "qemu")
      ctx.Fail(driver, "unsupported driver name '" + name + "' for disk '" + disk.target_dev + "' (expected qemu)");
    disk.driver_type = NodeAttr(driver, "type").value_or("raw");
    if (Classify(ctx, driver, "disk format", disk.driver_type, {"raw", "qcow2"},
                 {"none", "auto", "iso", "bochs", "cloop", "dmg", "cow", "qcow", "qed", "vmdk", "vpc", "vdi", "fat",
                  "vhd", "ploop", "luks", "vhdx", "parallels"}) == Support::kNo)
      return std::nullopt;
    disk.cache = Optional(ctx, driver, "cache", {"none", "writethrough", "writeback", "directsync", "unsafe"});
    disk.io = Optional(ctx, driver, "io", {"native", "threads", "io_uring"});
    disk.discard = Optional(ctx, driver, "discard", {"unmap", "ignore"});
  }

  if (const xmlNode* source = UniqueChild(ctx, node, "source"))
    disk.source = NodeAttr(source, disk.type == "block" ? "dev" : "file").value_or("");
  if (disk.source.empty() && disk.device != "cdrom")
    ctx.Fail(node, "missing source information for device " + disk.target_dev +
                       (disk.type == "block" ? " (<source dev='...'/>)" : " (<source file='...'/>)"));

  disk.readonly = UniqueChild(ctx, node, "readonly") != nullptr;
  disk.shareable = UniqueChild(ctx, node, "shareable") != nullptr;
  if (const xmlNode* serial = UniqueChild(ctx, node, "serial")) disk.serial = NodeText(serial);
  disk.boot_order = ParseBootOrder(ctx, node);

  return disk;
}

std::span<const UnderstoodElement> UnderstoodDiskElements() {
  static constexpr UnderstoodElement kElements[] = {
      {"domain/devices/disk", "type device"},
      {"domain/devices/disk/driver", "name type cache io discard"},
      {"domain/devices/disk/source", "file dev"},
      {"domain/devices/disk/target", "dev bus"},
      {"domain/devices/disk/readonly", ""},
      {"domain/devices/disk/shareable", ""},
      {"domain/devices/disk/serial", ""},
      {"domain/devices/disk/boot", "order"},
      {"domain/devices/disk/address", "type domain bus slot function multifunction controller target unit"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
