#include "qemu_cmd/disk_plan.h"

#include <cctype>

#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"
#include "qemu_cmd/raw_args.h"

namespace qlaunch::qemu {

namespace {

void Push(std::vector<std::string>* argv, std::string opt, std::string value) {
  argv->push_back(std::move(opt));
  argv->push_back(std::move(value));
}

}  // namespace

int DiskNameToIndex(const std::string& name) {
  size_t i = 0;
  // Skip the prefix ("hd", "sd", "vd", "xvd"): letters up to the last run of letters.
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  if (end != name.size()) return -1;  // partitions are not disks
  for (const char* p : {"xvd", "hd", "sd", "vd", "fd"}) {
    std::string_view pre(p);
    if (name.compare(0, pre.size(), pre) == 0) {
      i = pre.size();
      break;
    }
  }
  if (i == 0 || i >= name.size()) return -1;
  long idx = 0;
  for (; i < name.size(); ++i) {
    char c = name[i];
    if (c < 'a' || c > 'z') return -1;
    idx = idx * 26 + (c - 'a' + 1);
    if (idx > 1 << 20) return -1;
  }
  return static_cast<int>(idx - 1);
}

void RenderDisks(const domain::DomainDef& def, std::vector<std::string>* argv) {
  bool have_ahci = false, have_scsi = false;
  for (const domain::Disk& d : def.devices.disks) {
    const bool cdrom = d.device == "cdrom";
    const std::string drive_id = "drive-" + d.target_dev;
    KeyValueBuilder drive;
    if (!d.source.empty()) {
      drive.Add("file", std::string_view(d.source));
      drive.Add("format", std::string_view(d.driver_type.empty() ? "raw" : d.driver_type));
    }
    drive.Add("if", "none");
    drive.Add("id", std::string_view(drive_id));
    if (d.readonly || cdrom) drive.AddBool("readonly", true);
    int index = DiskNameToIndex(d.target_dev);

    KeyValueBuilder dev;
    if (d.target_bus == "virtio") {
      dev = KeyValueBuilder("virtio-blk-pci");
    } else if (d.target_bus == "ide" || d.target_bus == "sata") {
      if (index < 0)
        throw DiagnosticError(PlanError(def, d.line, "target", "cannot tell the unit of disk '" + d.target_dev + "'"));
      dev = KeyValueBuilder(cdrom ? "ide-cd" : "ide-hd");
      if (d.target_bus == "ide") {
        // The PIIX/ICH IDE controller: two buses with a master and a slave each.
        dev.Add("bus", std::string_view("ide." + std::to_string(index / 2)));
        dev.Add("unit", index % 2);
      } else {
        if (!have_ahci) {
          Push(argv, "-device", "ahci,id=sata0");
          have_ahci = true;
        }
        dev.Add("bus", std::string_view("sata0." + std::to_string(index)));
      }
    } else if (d.target_bus == "scsi") {
      if (index < 0)
        throw DiagnosticError(PlanError(def, d.line, "target", "cannot tell the unit of disk '" + d.target_dev + "'"));
      if (!have_scsi) {
        Push(argv, "-device", "virtio-scsi-pci,id=scsi0");
        have_scsi = true;
      }
      dev = KeyValueBuilder(cdrom ? "scsi-cd" : "scsi-hd");
      dev.Add("bus", "scsi0.0");
      dev.Add("scsi-id", index);
    } else {
      throw DiagnosticError(PlanError(def, d.line, "target", "disk bus '" + d.target_bus + "' is not supported"));
    }
    dev.Add("drive", std::string_view(drive_id));
    dev.Add("id", std::string_view(d.target_dev));
    Push(argv, "-drive", drive.str());
    Push(argv, "-device", dev.str());
  }
}

void PlanDiskDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  std::vector<std::string> argv;
  RenderDisks(*ctx.def, &argv);
  AppendRawArgs("disk", argv, out);
}

}  // namespace qlaunch::qemu
