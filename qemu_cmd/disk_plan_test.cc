// PlanDiskDevices against what `virsh domxml-to-native` (libvirt 9.0) prints for the same
// <disk>s: the -blockdev JSON is libvirt's text; its JSON -device appears here as the key=value
// form qlaunch renders (same properties; PCI bus/addr are the pci family's).
#include "qemu_cmd/disk_plan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "domain/parser.h"
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/plan_diagnostic.h"

namespace qlaunch::qemu {
namespace {

domain::DomainDef Parse(const std::string& machine, const std::string& devices, const std::string& os_boot = "") {
  // <devices> opens on line 2; the first <disk> is on line 3 when `devices` starts with "\n".
  return domain::ParseDomainXml("<domain type='qemu'><name>d</name><memory unit='MiB'>128</memory><os><type "
                                "machine='" + machine + "'>hvm</type>" + os_boot + "</os>\n<devices>" + devices +
                                    "</devices></domain>",
                                "d.xml");
}

std::vector<std::string> Plan(const domain::DomainDef& def) {
  DeviceContext ctx;
  ctx.def = &def;
  ctx.q35 = IsQ35(def.os.machine);
  std::vector<PlannedDevice> devices;
  PlanDiskDevices(ctx, &devices);
  return RenderDevicePlan(devices);
}

std::string Joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : "\n") + a;
  return out;
}

constexpr const char* kRaw = "<source file='/i/b.raw'/>";

std::string DiskXml(const std::string& device, const std::string& dev, const std::string& bus,
                    const std::string& inner = kRaw, const std::string& driver = "<driver name='qemu' type='raw'/>") {
  return "<disk type='file' device='" + device + "'>" + driver + inner + "<target dev='" + dev + "'" +
         (bus.empty() ? "" : " bus='" + bus + "'") + "/></disk>";
}

std::string Storage(const std::string& file, int n, const std::string& extra_before = "",
                    const std::string& extra_after = "", const std::string& driver = "file") {
  return R"({"driver":")" + driver + R"(","filename":")" + file + "\"" + extra_before + R"(,"node-name":"libvirt-)" +
         std::to_string(n) + "-storage\"" + extra_after + R"(,"auto-read-only":true,"discard":"unmap"})";
}
std::string Format(int n, bool ro, const std::string& fmt = "raw", const std::string& extra = "") {
  return R"({"node-name":"libvirt-)" + std::to_string(n) + R"(-format","read-only":)" + (ro ? "true" : "false") +
         extra + R"(,"driver":")" + fmt + R"(","file":"libvirt-)" + std::to_string(n) + R"(-storage"})";
}

struct Row {
  const char* label;
  std::string machine;
  std::string disks;
  std::vector<std::string> argv;
};

std::vector<Row> Rows() {
  const std::string kDirect = R"(,"cache":{"direct":true,"no-flush":false})";
  const std::string kBuffered = R"(,"cache":{"direct":false,"no-flush":false})";
  const std::string kUnsafe = R"(,"cache":{"direct":false,"no-flush":true})";
  return {
      {"virtio qcow2", "pc",
       "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='/i/a.qcow2'/>"
       "<target dev='vda' bus='virtio'/></disk>",
       {"-blockdev", Storage("/i/a.qcow2", 1), "-blockdev", Format(1, false, "qcow2"), "-device",
        "virtio-blk-pci,id=virtio-disk0,drive=libvirt-1-format,bootindex=1"}},
      {"virtio alias from the name, not the position", "pc", DiskXml("disk", "vdc", "virtio"),
       {"-blockdev", Storage("/i/b.raw", 1), "-blockdev", Format(1, false), "-device",
        "virtio-blk-pci,id=virtio-disk2,drive=libvirt-1-format,bootindex=1"}},
      {"block device, readonly", "pc",
       "<disk type='block' device='disk'><source dev='/dev/loop0'/><target dev='vdb'/><readonly/></disk>",
       {"-blockdev", Storage("/dev/loop0", 1, "", "", "host_device"), "-blockdev", Format(1, true), "-device",
        "virtio-blk-pci,id=virtio-disk1,drive=libvirt-1-format,bootindex=1"}},
      {"cache none, io native, discard unmap, shareable, serial", "pc",
       DiskXml("disk", "hdb", "ide", std::string(kRaw) + "<serial>abc123</serial><shareable/>",
               "<driver name='qemu' type='raw' cache='none' io='native' discard='unmap'/>"),
       {"-blockdev", Storage("/i/b.raw", 1, R"(,"aio":"native")", kDirect), "-blockdev",
        Format(1, false, "raw", R"(,"discard":"unmap")" + kDirect), "-device",
        "ide-hd,id=ide0-0-1,bus=ide.0,unit=1,share-rw=on,drive=libvirt-1-format,bootindex=1,write-cache=on,"
        "serial=abc123"}},
      {"a writable shareable disk: cache none unless the XML picks one", "pc",
       DiskXml("disk", "vda", "", std::string(kRaw) + "<shareable/>") +
           DiskXml("disk", "vdb", "", std::string(kRaw) + "<shareable/><readonly/>") +
           DiskXml("disk", "vdc", "", std::string(kRaw) + "<shareable/>", "<driver name='qemu' type='raw' cache='unsafe'/>"),
       {"-blockdev", Storage("/i/b.raw", 3, "", kDirect), "-blockdev", Format(3, false, "raw", kDirect), "-device",
        "virtio-blk-pci,id=virtio-disk0,share-rw=on,drive=libvirt-3-format,bootindex=1,write-cache=on",
        "-blockdev", Storage("/i/b.raw", 2), "-blockdev", Format(2, true), "-device",
        "virtio-blk-pci,id=virtio-disk1,share-rw=on,drive=libvirt-2-format",
        "-blockdev", Storage("/i/b.raw", 1, "", kUnsafe), "-blockdev", Format(1, false, "raw", kUnsafe), "-device",
        "virtio-blk-pci,id=virtio-disk2,share-rw=on,drive=libvirt-1-format,write-cache=on"}},
      {"cache writethrough", "pc", DiskXml("disk", "vda", "", kRaw, "<driver name='qemu' type='raw' cache='writethrough'/>"),
       {"-blockdev", Storage("/i/b.raw", 1, "", kBuffered), "-blockdev", Format(1, false, "raw", kBuffered), "-device",
        "virtio-blk-pci,id=virtio-disk0,drive=libvirt-1-format,bootindex=1,write-cache=off"}},
      {"cache writeback", "pc", DiskXml("disk", "vda", "", kRaw, "<driver name='qemu' type='raw' cache='writeback'/>"),
       {"-blockdev", Storage("/i/b.raw", 1, "", kBuffered), "-blockdev", Format(1, false, "raw", kBuffered), "-device",
        "virtio-blk-pci,id=virtio-disk0,drive=libvirt-1-format,bootindex=1,write-cache=on"}},
      {"cache directsync", "pc", DiskXml("disk", "vda", "", kRaw, "<driver name='qemu' type='raw' cache='directsync'/>"),
       {"-blockdev", Storage("/i/b.raw", 1, "", kDirect), "-blockdev", Format(1, false, "raw", kDirect), "-device",
        "virtio-blk-pci,id=virtio-disk0,drive=libvirt-1-format,bootindex=1,write-cache=off"}},
      {"cache unsafe", "pc", DiskXml("disk", "vda", "", kRaw, "<driver name='qemu' type='raw' cache='unsafe'/>"),
       {"-blockdev", Storage("/i/b.raw", 1, "", kUnsafe), "-blockdev", Format(1, false, "raw", kUnsafe), "-device",
        "virtio-blk-pci,id=virtio-disk0,drive=libvirt-1-format,bootindex=1,write-cache=on"}},
      {"cache default, io threads, discard ignore", "pc",
       DiskXml("disk", "vda", "", kRaw, "<driver name='qemu' type='raw' cache='default' io='threads' discard='ignore'/>"),
       {"-blockdev", Storage("/i/b.raw", 1, R"(,"aio":"threads")"), "-blockdev",
        Format(1, false, "raw", R"(,"discard":"ignore")"), "-device",
        "virtio-blk-pci,id=virtio-disk0,drive=libvirt-1-format,bootindex=1"}},
      {"no <driver>: raw", "pc", "<disk type='file'><source file='/i/a'/><target dev='hda'/></disk>",
       {"-blockdev", Storage("/i/a", 1), "-blockdev", Format(1, false), "-device",
        "ide-hd,id=ide0-0-0,bus=ide.0,unit=0,drive=libvirt-1-format,bootindex=1"}},
      {"ide cdrom and an empty one: numbered from the last disk, the empty one counts", "pc",
       DiskXml("cdrom", "hdc", "ide") + DiskXml("cdrom", "hdd", "ide", "<readonly/>"),
       {"-blockdev", Storage("/i/b.raw", 2), "-blockdev", Format(2, true), "-device",
        "ide-cd,id=ide0-1-0,bus=ide.1,unit=0,drive=libvirt-2-format", "-device", "ide-cd,id=ide0-1-1,bus=ide.1,unit=1"}},
      {"ide drive address", "pc",
       DiskXml("disk", "hda", "ide", std::string(kRaw) + "<address type='drive' controller='0' bus='1' target='0' unit='1'/>"),
       {"-blockdev", Storage("/i/b.raw", 1), "-blockdev", Format(1, false), "-device",
        "ide-hd,id=ide0-1-1,bus=ide.1,unit=1,drive=libvirt-1-format,bootindex=1"}},
      {"sata on q35: the built-in AHCI's ide.N buses", "q35",
       DiskXml("disk", "sda", "sata") + DiskXml("cdrom", "sdb", "sata") + DiskXml("cdrom", "sdc", "sata", "") +
           DiskXml("disk", "sdh", "sata"),
       {"-blockdev", Storage("/i/b.raw", 4), "-blockdev", Format(4, false), "-device",
        "ide-hd,id=sata0-0-0,bus=ide.0,drive=libvirt-4-format,bootindex=1", "-blockdev", Storage("/i/b.raw", 3),
        "-blockdev", Format(3, true), "-device", "ide-cd,id=sata0-0-1,bus=ide.1,drive=libvirt-3-format", "-device",
        "ide-cd,id=sata0-0-2,bus=ide.2", "-blockdev", Storage("/i/b.raw", 1), "-blockdev", Format(1, false),
        "-device", "ide-hd,id=sata1-0-1,bus=sata1.1,drive=libvirt-1-format"}},
      {"sata on pc: sata0.N", "pc", DiskXml("disk", "sda", "sata") + DiskXml("cdrom", "sdg", "sata"),
       {"-blockdev", Storage("/i/b.raw", 2), "-blockdev", Format(2, false), "-device",
        "ide-hd,id=sata0-0-0,bus=sata0.0,drive=libvirt-2-format,bootindex=1", "-blockdev", Storage("/i/b.raw", 1),
        "-blockdev", Format(1, true), "-device", "ide-cd,id=sata1-0-0,bus=sata1.0,drive=libvirt-1-format"}},
      {"sata drive address", "pc",
       DiskXml("disk", "sda", "sata", std::string(kRaw) + "<address type='drive' controller='1' unit='3'/>"),
       {"-blockdev", Storage("/i/b.raw", 1), "-blockdev", Format(1, false), "-device",
        "ide-hd,id=sata1-0-3,bus=sata1.3,drive=libvirt-1-format,bootindex=1"}},
      {"scsi on libvirt's default (lsi) controllers: 7 units each", "pc",
       DiskXml("disk", "sda", "scsi") + DiskXml("cdrom", "sdb", "") + DiskXml("disk", "sdab", "scsi"),
       {"-blockdev", Storage("/i/b.raw", 3), "-blockdev", Format(3, false), "-device",
        "scsi-hd,id=scsi0-0-0,bus=scsi0.0,scsi-id=0,device_id=drive-scsi0-0-0,drive=libvirt-3-format,bootindex=1",
        "-blockdev", Storage("/i/b.raw", 2), "-blockdev", Format(2, true), "-device",
        "scsi-cd,id=scsi0-0-1,bus=scsi0.0,scsi-id=1,device_id=drive-scsi0-0-1,drive=libvirt-2-format", "-blockdev",
        Storage("/i/b.raw", 1), "-blockdev", Format(1, false), "-device",
        "scsi-hd,id=scsi3-0-6,bus=scsi3.0,scsi-id=6,device_id=drive-scsi3-0-6,drive=libvirt-1-format"}},
      {"libvirt's disk order: by bus as first seen, by index within a bus", "pc",
       DiskXml("disk", "hdb", "ide") + DiskXml("disk", "vdc", "virtio") + DiskXml("disk", "hda", "ide") +
           DiskXml("disk", "vda", "virtio"),
       {"-blockdev", Storage("/i/b.raw", 4), "-blockdev", Format(4, false), "-device",
        "ide-hd,id=ide0-0-0,bus=ide.0,unit=0,drive=libvirt-4-format,bootindex=1", "-blockdev", Storage("/i/b.raw", 3),
        "-blockdev", Format(3, false), "-device", "ide-hd,id=ide0-0-1,bus=ide.0,unit=1,drive=libvirt-3-format",
        "-blockdev", Storage("/i/b.raw", 2), "-blockdev", Format(2, false), "-device",
        "virtio-blk-pci,id=virtio-disk0,drive=libvirt-2-format", "-blockdev", Storage("/i/b.raw", 1), "-blockdev",
        Format(1, false), "-device", "virtio-blk-pci,id=virtio-disk2,drive=libvirt-1-format"}},
      {"per-device boot order", "pc",
       DiskXml("cdrom", "hda", "ide", "<boot order='2'/>") + DiskXml("disk", "vda", "", std::string(kRaw) + "<boot order='1'/>"),
       {"-device", "ide-cd,id=ide0-0-0,bus=ide.0,unit=0,bootindex=2", "-blockdev", Storage("/i/b.raw", 1), "-blockdev",
        Format(1, false), "-device", "virtio-blk-pci,id=virtio-disk0,drive=libvirt-1-format,bootindex=1"}},
      {"serial: a space escaped as libvirt does", "pc", DiskXml("disk", "vda", "", std::string(kRaw) + "<serial>a b-c_d.e+f</serial>"),
       {"-blockdev", Storage("/i/b.raw", 1), "-blockdev", Format(1, false), "-device",
        "virtio-blk-pci,id=virtio-disk0,drive=libvirt-1-format,bootindex=1,serial=a\\ b-c_d.e+f"}},
  };
}

TEST(PlanDiskDevices, AsLibvirtRendersThem) {
  for (const Row& r : Rows()) {
    domain::DomainDef def = Parse(r.machine, r.disks);
    std::vector<std::string> argv;
    try {
      argv = Plan(def);
    } catch (const DiagnosticError& e) {
      ADD_FAILURE() << r.label << ": " << e.what();
      continue;
    }
    EXPECT_EQ(Joined(argv), Joined(r.argv)) << r.label;
  }
}

// A virtio-scsi controller addresses by channel, scsi-id and lun (and its ids have 4 parts).
// `virsh domxml-to-native` (libvirt 9.0) of a usb disk beside a usb tablet on q35:
// {"driver":"usb-storage","bus":"usb.0","port":"1","drive":"libvirt-1-format","id":"usb-disk1",
//  "bootindex":1,"removable":false}; the tablet then gets port 2.
TEST(PlanDiskDevices, UsbDiskOnTheFirstUsbPort) {
  const domain::DomainDef def = Parse("q35", DiskXml("disk", "sdb", "usb") + "<input type='tablet' bus='usb'/>",
                                      "<boot dev='hd'/>");
  const std::vector<std::string> argv = Plan(def);
  ASSERT_EQ(argv.size(), 6u) << Joined(argv);
  EXPECT_EQ(argv[5], "usb-storage,id=usb-disk1,bus=usb.0,port=1,drive=libvirt-1-format,bootindex=1,removable=off");
  const domain::DomainDef cd = Parse("q35", DiskXml("cdrom", "sdb", "usb"));
  EXPECT_THROW(Plan(cd), DiagnosticError);
}

TEST(PlanDiskDevices, ScsiOnVirtioScsi) {
  Row r =
      {"scsi on virtio-scsi: channel, scsi-id, lun", "q35",
       DiskXml("disk", "sda", "scsi") +
           DiskXml("cdrom", "sdb", "scsi", std::string(kRaw) + "<address type='drive' controller='0' bus='0' target='3' unit='5'/>") +
           DiskXml("cdrom", "sdc", "scsi", "", "<driver name='qemu' type='raw' cache='none'/>"),
       {"-blockdev", Storage("/i/b.raw", 3), "-blockdev", Format(3, false), "-device",
        "scsi-hd,id=scsi0-0-0-0,bus=scsi0.0,channel=0,scsi-id=0,lun=0,device_id=drive-scsi0-0-0-0,"
        "drive=libvirt-3-format,bootindex=1",
        "-blockdev", Storage("/i/b.raw", 2), "-blockdev", Format(2, true), "-device",
        "scsi-cd,id=scsi0-0-3-5,bus=scsi0.0,channel=0,scsi-id=3,lun=5,device_id=drive-scsi0-0-3-5,drive=libvirt-2-format",
        "-device", "scsi-cd,id=scsi0-0-0-2,bus=scsi0.0,channel=0,scsi-id=0,lun=2,device_id=drive-scsi0-0-0-2,write-cache=on"}};
  domain::DomainDef def = Parse(r.machine, r.disks);
  domain::Controller c;
  c.type = "scsi";
  c.model = "virtio-scsi";
  def.devices.controllers.push_back(c);
  EXPECT_EQ(Joined(Plan(def)), Joined(r.argv));
  def.devices.controllers[0].model = "lsilogic";
  EXPECT_THROW(Plan(def), DiagnosticError);  // target 3 on an lsi
}

TEST(PlanDiskDevices, OsBootGoesToTheFirstDiskInLibvirtsOrder) {
  auto def = Parse("pc", DiskXml("cdrom", "hdd", "ide") + DiskXml("disk", "hdb", "ide") + DiskXml("cdrom", "hdc", "ide"),
                   "<boot dev='cdrom'/><boot dev='hd'/>");
  std::string argv = Joined(Plan(def));
  EXPECT_NE(argv.find("ide-hd,id=ide0-0-1,bus=ide.0,unit=1,drive=libvirt-3-format,bootindex=2"), std::string::npos) << argv;
  EXPECT_NE(argv.find("ide-cd,id=ide0-1-0,bus=ide.1,unit=0,drive=libvirt-2-format,bootindex=1"), std::string::npos) << argv;
  EXPECT_NE(argv.find("ide-cd,id=ide0-1-1,bus=ide.1,unit=1,drive=libvirt-1-format"), std::string::npos) << argv;
  EXPECT_EQ(argv.find("libvirt-1-format,bootindex"), std::string::npos) << argv;
}

TEST(PlanDiskDevices, VirtioDisksArePciDevicesForThePciFamily) {
  auto def = Parse("pc", DiskXml("disk", "vda", "", std::string(kRaw) +
                                                       "<address type='pci' domain='0' bus='0' slot='7' function='0'/>") +
                             DiskXml("disk", "hda", ""));
  DeviceContext ctx;
  ctx.def = &def;
  std::vector<PlannedDevice> devices;
  PlanDiskDevices(ctx, &devices);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_TRUE(devices[0].pci);
  EXPECT_EQ(devices[0].rank, PciRank::kDisk);
  EXPECT_EQ(devices[0].address.type, "pci");
  EXPECT_EQ(devices[0].address.slot, 7u);
  EXPECT_EQ(devices[0].element, "disk");
  EXPECT_EQ(devices[0].line, 2);
  EXPECT_FALSE(devices[1].pci);  // hda: the built-in IDE
}

// A file name with commas, spaces, '=' and JSON-looking text is one JSON string value: QEMU
// gets exactly that file name and no other key.
TEST(PlanDiskDevices, HostileFileNamesStayOneFileName) {
  const std::string evil = R"(/i/a,b=c d"},{"driver":"x",file=/etc/shadow\.img)";
  domain::DomainDef def = Parse("pc", "");
  domain::Disk d;
  d.source = evil;
  d.target_dev = "vda";
  d.target_bus = "virtio";
  d.serial = "s";
  d.line = 9;
  def.devices.disks.push_back(d);
  std::vector<std::string> argv = Plan(def);
  ASSERT_GE(argv.size(), 2u);
  nlohmann::json storage = nlohmann::json::parse(argv[1]);
  EXPECT_EQ(storage["filename"], evil);
  EXPECT_EQ(storage.size(), 5u);
}

struct BadRow {
  const char* label;
  std::string machine, disks, message;
  int line;
};

TEST(PlanDiskDevices, ErrorsNameTheDisk) {
  const std::vector<BadRow> rows = {
      {"ide on q35", "q35", "\n" + DiskXml("disk", "hda", "ide"), "IDE controllers are unsupported", 3},
      {"second ide controller", "pc", "\n" + DiskXml("disk", "hde", "ide"), "Only 1 IDE controller is supported", 3},
      {"ide target", "pc", "\n" + DiskXml("disk", "hda", "ide", std::string(kRaw) + "<address type='drive' target='1'/>"),
       "target must be 0 for ide controller", 3},
      {"ide bus 2", "pc", "\n" + DiskXml("disk", "hda", "ide", std::string(kRaw) + "<address type='drive' bus='2'/>"),
       "IDE bus 2 does not exist", 3},
      {"ide unit 2", "pc", "\n" + DiskXml("disk", "hda", "ide", std::string(kRaw) + "<address type='drive' unit='2'/>"),
       "IDE unit 2 does not exist", 3},
      {"sata bus", "q35", "\n" + DiskXml("disk", "sda", "sata", std::string(kRaw) + "<address type='drive' bus='1'/>"),
       "bus must be 0 for sata controller", 3},
      {"sata unit 6", "q35", "\n" + DiskXml("disk", "sda", "sata", std::string(kRaw) + "<address type='drive' unit='6'/>"),
       "SATA unit 6 does not exist", 3},
      {"readonly ide disk", "pc", "\n" + DiskXml("disk", "hda", "ide", std::string(kRaw) + "<readonly/>"),
       "readonly ide disks are not supported", 3},
      {"readonly sata disk", "q35", "\n" + DiskXml("disk", "sda", "sata", std::string(kRaw) + "<readonly/>"),
       "readonly sata disks are not supported", 3},
      {"lsi target", "pc", "\n" + DiskXml("disk", "sda", "scsi", std::string(kRaw) + "<address type='drive' target='1'/>"),
       "target must be 0 for controller model 'lsilogic'", 3},
      {"io native without cache none", "pc",
       "\n" + DiskXml("disk", "vda", "", kRaw, "<driver name='qemu' type='raw' io='native'/>"),
       "io='native' needs either no disk cache or directsync", 3},
      {"unsafe serial", "pc", "\n" + DiskXml("disk", "vda", "", std::string(kRaw) + "<serial>a,b=c</serial>"),
       "driver serial 'a,b=c' contains unsafe characters", 3},
      {"two disks on one unit", "pc",
       "\n" + DiskXml("disk", "hda", "ide") + "\n" +
           DiskXml("disk", "hdb", "ide", std::string(kRaw) + "<address type='drive' controller='0' bus='0' unit='0'/>"),
       "Found duplicate drive address for disk with target name 'hda' controller='0' bus='0' target='0' unit='0': "
       "disk 'hdb' at line 4 has it too",
       3},
      {"two disks on one unit, named in libvirt's order", "q35",
       "\n" + DiskXml("cdrom", "sde", "sata") + "\n" +
           DiskXml("disk", "sdd", "sata", std::string(kRaw) + "<address type='drive' controller='0' unit='4'/>"),
       "target name 'sdd' controller='0' bus='0' target='0' unit='4': disk 'sde' at line 3 has it too", 4},
      {"cdrom on virtio", "pc", "\n" + DiskXml("cdrom", "vda", "virtio"), "does not support ejectable media", 3},
      {"shared qcow2", "pc",
       "\n" + DiskXml("disk", "vdb", "", std::string(kRaw) + "<shareable/>", "<driver name='qemu' type='qcow2'/>"),
       "shared access for disk 'vdb' requires use of supported storage format", 3},
      {"one target twice", "pc", "\n" + DiskXml("disk", "vda", "") + "\n" + DiskXml("disk", "vda", "", "<source file='/i/c'/>"),
       "target 'vda' duplicated for disk sources '/i/b.raw' (line 3) and '/i/c'", 4},
      {"boot order twice", "pc",
       "\n" + DiskXml("disk", "vda", "", std::string(kRaw) + "<boot order='1'/>") + "\n" +
           DiskXml("disk", "vdb", "", std::string(kRaw) + "<boot order='1'/>"),
       "boot order 1 is already used by the device at line 3", 4},
  };
  for (const BadRow& r : rows) {
    try {
      Plan(Parse(r.machine, r.disks));
      ADD_FAILURE() << r.label << ": planned";
    } catch (const DiagnosticError& e) {
      ASSERT_FALSE(e.diagnostics().empty());
      EXPECT_NE(e.diagnostics()[0].message.find(r.message), std::string::npos) << r.label << ": " << e.what();
      EXPECT_EQ(e.diagnostics()[0].line, r.line) << r.label;
      EXPECT_EQ(e.diagnostics()[0].file, "d.xml") << r.label;
    }
  }
}

TEST(DiskDriveAddress, FromTheTargetNameAsLibvirt) {
  struct Case {
    const char* dev;
    const char* bus;
    DriveAddress want;
  };
  for (const Case& c : {Case{"hda", "ide", {0, 0, 0, 0}}, Case{"hdb", "ide", {0, 0, 0, 1}}, Case{"hdc", "ide", {0, 1, 0, 0}},
                        Case{"hdd", "ide", {0, 1, 0, 1}}, Case{"hde", "ide", {1, 0, 0, 0}}, Case{"sdf", "sata", {0, 0, 0, 5}},
                        Case{"sdg", "sata", {1, 0, 0, 0}}, Case{"sdg", "scsi", {0, 0, 0, 6}}, Case{"sdh", "scsi", {1, 0, 0, 0}},
                        Case{"sdab", "scsi", {3, 0, 0, 6}}}) {
    domain::Disk d;
    d.target_dev = c.dev;
    d.target_bus = c.bus;
    EXPECT_EQ(DiskDriveAddress(d), c.want) << c.dev << " " << c.bus;
  }
  domain::Disk v;
  v.target_dev = "vda";
  v.target_bus = "virtio";
  EXPECT_EQ(DiskDriveAddress(v), std::nullopt);
}

}  // namespace
}  // namespace qlaunch::qemu
