// <disk> as parsed: the model, libvirt's defaults and order, and every kind of bad input with
// the line it names.
#include <gtest/gtest.h>

#include "domain/parser.h"

namespace qlaunch::domain {
namespace {

// <devices> opens on line 1; `disks` starts on line 2 when it begins with "\n".
DomainDef Parse(const std::string& disks, bool strict = false) {
  ParseOptions opts;
  opts.strict = strict;
  return ParseDomainXml("<domain type='qemu'><name>d</name><memory unit='MiB'>64</memory><devices>" + disks +
                            "\n</devices></domain>",
                        "d.xml", opts);
}

TEST(ParseDisk, EverythingQlaunchReads) {
  DomainDef d = Parse(R"(
<disk type='block' device='disk'>
  <driver name='qemu' type='qcow2' cache='none' io='native' discard='unmap'/>
  <source dev='/dev/vg/root'/>
  <target dev='sdb' bus='sata'/>
  <readonly/>
  <shareable/>
  <serial>WD-123</serial>
  <boot order='2'/>
  <address type='drive' controller='1' bus='0' target='0' unit='3'/>
</disk>)");
  ASSERT_EQ(d.devices.disks.size(), 1u);
  const Disk& k = d.devices.disks[0];
  EXPECT_EQ(k.type, "block");
  EXPECT_EQ(k.device, "disk");
  EXPECT_EQ(k.driver_type, "qcow2");
  EXPECT_EQ(k.cache, "none");
  EXPECT_EQ(k.io, "native");
  EXPECT_EQ(k.discard, "unmap");
  EXPECT_EQ(k.source, "/dev/vg/root");
  EXPECT_EQ(k.target_dev, "sdb");
  EXPECT_EQ(k.target_bus, "sata");
  EXPECT_TRUE(k.readonly);
  EXPECT_TRUE(k.shareable);
  EXPECT_EQ(k.serial, "WD-123");
  EXPECT_EQ(k.boot_order, 2u);
  EXPECT_EQ(k.address.type, "drive");
  EXPECT_EQ(k.address.controller, 1u);
  EXPECT_EQ(k.address.unit, 3u);
  EXPECT_EQ(k.address.line, 10);
  EXPECT_EQ(k.line, 2);
  EXPECT_TRUE(d.warnings.empty()) << d.warnings[0].message;
}

TEST(ParseDisk, DefaultsAndTheBusFromTheName) {
  DomainDef d = Parse(
      "<disk><source file='/a'/><target dev='vda'/></disk>"
      "<disk device='cdrom'><target dev='hdc'/></disk>"
      "<disk device='cdrom'><source/><target dev='sdc'/></disk>"
      "<disk><source file='/b'/><target dev='zz' bus='sata'/><address type='drive' unit='2'/></disk>"
      "<disk><driver name='qemu' cache='default' io='default' discard='default'/><source file='/c'/>"
      "<target dev='xyz'/><address type='drive' unit='1'/></disk>");
  ASSERT_EQ(d.devices.disks.size(), 5u);
  const auto& k = d.devices.disks;
  EXPECT_EQ(k[0].type, "file");
  EXPECT_EQ(k[0].device, "disk");
  EXPECT_EQ(k[0].driver_type, "raw");
  EXPECT_EQ(k[0].target_bus, "virtio");
  EXPECT_EQ(k[0].cache, "");
  // libvirt's order (virDomainDiskInsert): xyz has no index (-1), so it goes before hdc on the
  // same bus (ide, the default bus).
  EXPECT_EQ(k[1].target_dev, "xyz");
  EXPECT_EQ(k[1].target_bus, "ide");
  EXPECT_EQ(k[1].cache, "");
  EXPECT_EQ(k[1].io, "");
  EXPECT_EQ(k[1].discard, "");
  EXPECT_EQ(k[2].target_dev, "hdc");
  EXPECT_EQ(k[2].target_bus, "ide");
  EXPECT_EQ(k[2].source, "");  // an empty cdrom
  EXPECT_EQ(k[3].target_bus, "scsi");
  EXPECT_EQ(k[3].source, "");
  EXPECT_EQ(k[4].target_bus, "sata");
}

TEST(ParseDisk, LibvirtsOrder) {
  DomainDef d = Parse(
      "<disk><source file='/1'/><target dev='hdb'/></disk>"
      "<disk><source file='/2'/><target dev='vdc'/></disk>"
      "<disk><source file='/3'/><target dev='hda'/></disk>"
      "<disk><source file='/4'/><target dev='vda'/></disk>"
      "<disk><source file='/5'/><target dev='sda' bus='sata'/></disk>"
      "<disk><source file='/6'/><target dev='vdb'/></disk>");
  std::string order;
  for (const Disk& k : d.devices.disks) order += k.target_dev + " ";
  EXPECT_EQ(order, "hda hdb vda vdb vdc sda ");
}

TEST(ParseDisk, HostileFileNameIsKeptAsWritten) {
  const std::string evil = R"(/var/a,b=c d"},{"driver":"x",format=raw,file=/etc/shadow.img)";
  DomainDef d = Parse("<disk><source file='" + std::string(R"(/var/a,b=c d&quot;},{&quot;driver&quot;:&quot;x&quot;,format=raw,file=/etc/shadow.img)") +
                      "'/><target dev='vda'/></disk>");
  ASSERT_EQ(d.devices.disks.size(), 1u);
  EXPECT_EQ(d.devices.disks[0].source, evil);
}

TEST(ParseDisk, UnsupportedValuesSkipTheDisk) {
  struct Row {
    std::string xml, message;
  };
  for (const Row& r : std::vector<Row>{
           {"<disk type='network'><target dev='vda'/></disk>", "disk type 'network' not supported"},
           {"<disk device='floppy'><source file='/f'/><target dev='fda'/></disk>", "disk device 'floppy'"},
           {"<disk device='lun'><source file='/f'/><target dev='sda'/></disk>", "disk device 'lun'"},
           {"<disk><source file='/f'/><target dev='fda' bus='fdc'/></disk>", "disk bus 'fdc'"},
           {"<disk><source file='/f'/><target dev='xvda'/></disk>", "disk bus 'xen'"},
           {"<disk><driver name='qemu' type='vmdk'/><source file='/f'/><target dev='vda'/></disk>",
            "disk format 'vmdk'"},
       }) {
    DomainDef d = Parse("\n" + r.xml);
    EXPECT_TRUE(d.devices.disks.empty()) << r.xml;
    ASSERT_EQ(d.warnings.size(), 1u) << r.xml;
    EXPECT_NE(d.warnings[0].message.find(r.message), std::string::npos) << d.warnings[0].message;
    EXPECT_EQ(d.warnings[0].line, 2) << r.xml;
    EXPECT_THROW(Parse("\n" + r.xml, true), DiagnosticError) << r.xml;
  }
}

TEST(ParseDisk, WhatQlaunchDoesNotReadIsReported) {
  DomainDef d = Parse(
      "\n<disk><driver name='qemu' type='raw' iothread='1'/><source file='/f'/><target dev='vda'/>\n"
      "<blockio logical_block_size='4096'/></disk>");
  ASSERT_EQ(d.devices.disks.size(), 1u);
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_NE(d.warnings[0].message.find("iothread"), std::string::npos) << d.warnings[0].message;
  EXPECT_EQ(d.warnings[0].line, 2);
  EXPECT_EQ(d.warnings[1].line, 3);
}

TEST(ParseDisk, BadInputIsAnErrorNamingTheLine) {
  struct Row {
    std::string label, xml, message;
    int line;
    std::string element;
  };
  for (const Row& r : std::vector<Row>{
           {"no target", "<disk><source file='/f'/></disk>", "missing <target> in disk", 2, "disk"},
           {"no target dev", "<disk><source file='/f'/>\n<target bus='virtio'/></disk>", "dev", 3, "target"},
           {"bad type", "<disk type='tape'><target dev='vda'/></disk>", "unknown disk type 'tape'", 2, "disk"},
           {"bad device", "<disk device='tape'><target dev='vda'/></disk>", "unknown disk device 'tape'", 2, "disk"},
           {"bad bus", "<disk><source file='/f'/>\n<target dev='vda' bus='pcie'/></disk>", "unknown disk bus 'pcie'",
            3, "target"},
           {"bad driver name", "<disk>\n<driver name='tap'/><source file='/f'/><target dev='vda'/></disk>",
            "unsupported driver name 'tap' for disk 'vda'", 3, "driver"},
           {"bad format", "<disk>\n<driver name='qemu' type='bogus'/><source file='/f'/><target dev='vda'/></disk>",
            "unknown disk format 'bogus'", 3, "driver"},
           {"bad cache", "<disk>\n<driver cache='sometimes'/><source file='/f'/><target dev='vda'/></disk>",
            "unknown disk driver cache 'sometimes'", 3, "driver"},
           {"bad io", "<disk>\n<driver io='fast'/><source file='/f'/><target dev='vda'/></disk>",
            "unknown disk driver io 'fast'", 3, "driver"},
           {"bad discard", "<disk>\n<driver discard='yes'/><source file='/f'/><target dev='vda'/></disk>",
            "unknown disk driver discard 'yes'", 3, "driver"},
           {"disk without source", "<disk>\n<target dev='vda'/></disk>", "missing source information for device vda",
            2, "disk"},
           {"block disk with file=", "<disk type='block'><source file='/f'/>\n<target dev='vda'/></disk>",
            "missing source information for device vda (<source dev='...'/>)", 2, "disk"},
           {"partition", "<disk><source file='/f'/>\n<target dev='vda1'/></disk>",
            "invalid disk target 'vda1', partitions can't appear in disk targets", 3, "target"},
           {"unknown name", "<disk><source file='/f'/>\n<target dev='disk0' bus='sata'/></disk>",
            "Unknown disk name 'disk0' and no address specified", 3, "target"},
           {"unknown virtio name", "<disk><source file='/f'/>\n<target dev='root' bus='virtio'/></disk>",
            "Unknown disk name 'root'", 3, "target"},
           {"drive address on virtio", "<disk><source file='/f'/><target dev='vda'/>\n<address type='drive'/></disk>",
            "virtio disk cannot have an address of type 'drive'", 3, "address"},
           {"pci address on sata",
            "<disk><source file='/f'/><target dev='sda' bus='sata'/>\n<address type='pci' slot='5'/></disk>",
            "Invalid address type 'pci' for the disk 'sda' with the bus type 'sata'", 3, "address"},
           {"bad unit", "<disk><source file='/f'/><target dev='sda' bus='sata'/>\n<address type='drive' unit='x'/></disk>",
            "invalid address unit 'x'", 3, "address"},
           {"bad boot order", "<disk><source file='/f'/><target dev='vda'/>\n<boot order='0'/></disk>",
            "invalid boot order '0'", 3, "boot"},
           {"two sources", "<disk><source file='/f'/>\n<source file='/g'/><target dev='vda'/></disk>", "source", 3,
            "source"},
       }) {
    try {
      Parse("\n" + r.xml);
      ADD_FAILURE() << r.label << ": parsed";
    } catch (const DiagnosticError& e) {
      ASSERT_FALSE(e.diagnostics().empty());
      const Diagnostic& g = e.diagnostics()[0];
      EXPECT_NE(g.message.find(r.message), std::string::npos) << r.label << ": " << e.what();
      EXPECT_EQ(g.line, r.line) << r.label << ": " << e.what();
      EXPECT_EQ(g.element, r.element) << r.label << ": " << e.what();
      EXPECT_EQ(g.file, "d.xml");
    }
  }
}

TEST(DiskNameToIndex, LibvirtNaming) {
  struct Case {
    const char* name;
    int index;
  };
  for (Case c : {Case{"hda", 0}, Case{"hdd", 3}, Case{"vdb", 1}, Case{"sdz", 25}, Case{"sdaa", 26}, Case{"sdab", 27},
                 Case{"xvdc", 2}, Case{"ubdb", 1}, Case{"fda", 0}, Case{"vda1", -1}, Case{"hd", -1}, Case{"nvme0n1", -1},
                 Case{"vdA", -1}, Case{"", -1}}) {
    EXPECT_EQ(DiskNameToIndex(c.name), c.index) << c.name;
  }
}

}  // namespace
}  // namespace qlaunch::domain
