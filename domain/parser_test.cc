// ParseDomainXml / ParseDomainFile: values, defaults, unsupported-element reporting, size caps.
#include "domain/parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "domain/test_util.h"
#include "domain/validate.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;
using testing::FixturePath;
using testing::ParseError;

constexpr uint64_t kKiB = 1024, kMiB = kKiB << 10, kGiB = kMiB << 10;

class EverythingFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { def_ = new DomainDef(ParseDomainFile(FixturePath("everything.xml"))); }
  static void TearDownTestSuite() { delete def_; }
  static const DomainDef& def() { return *def_; }
  static inline DomainDef* def_ = nullptr;
};

TEST_F(EverythingFixture, UnderstoodEverythingAndIsValid) {
  for (const Diagnostic& w : def().warnings) ADD_FAILURE() << w.ToString();
  for (const Diagnostic& d : ValidateDomain(def())) ADD_FAILURE() << d.ToString();
}

TEST_F(EverythingFixture, Identity) {
  EXPECT_EQ(def().file, FixturePath("everything.xml"));
  EXPECT_EQ(def().type, "kvm");
  EXPECT_EQ(def().name, "big-numa-guest");
  EXPECT_EQ(def().name_line, 2);
  EXPECT_EQ(def().uuid, "c7a5fdbd-edaf-9455-926a-d65c16db1809");
}

TEST_F(EverythingFixture, MemorySizes) {
  EXPECT_EQ(def().memory_bytes, 16 * kGiB);
  EXPECT_EQ(def().memory_line, 6);
  EXPECT_EQ(def().current_memory_bytes, 8192 * kMiB);
  EXPECT_EQ(def().current_memory_line, 7);
  EXPECT_EQ(def().max_memory_bytes, 64 * kGiB);
  EXPECT_EQ(def().max_memory_slots, 4u);
  EXPECT_EQ(def().max_memory_line, 5);
}

TEST_F(EverythingFixture, VcpuAndCputune) {
  const Vcpu& v = def().vcpu;
  EXPECT_EQ(v.count, 8u);
  EXPECT_EQ(v.current, 6u);
  EXPECT_EQ(v.placement, Placement::kStatic);
  EXPECT_EQ(v.cpuset, (IdSet{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(v.line, 8);
  EXPECT_EQ(def().cputune.emulatorpin, (IdSet{6, 7}));
  EXPECT_EQ(def().cputune.emulatorpin_line, 10);
  ASSERT_EQ(def().cputune.vcpupins.size(), 2u);
  EXPECT_EQ(def().cputune.vcpupins[1].vcpu, 1u);
  EXPECT_EQ(def().cputune.vcpupins[1].cpuset, (IdSet{1}));
  EXPECT_EQ(def().cputune.vcpupins[1].line, 12);
}

TEST_F(EverythingFixture, NumaTune) {
  const NumaTune& t = def().numatune;
  EXPECT_TRUE(t.present);
  EXPECT_EQ(t.line, 14);
  EXPECT_EQ(t.mode, NumaMode::kStrict);
  EXPECT_EQ(t.nodeset, (IdSet{0, 1}));
  EXPECT_EQ(t.placement, Placement::kStatic);
  EXPECT_EQ(t.memory_line, 15);
  ASSERT_EQ(t.memnodes.size(), 2u);
  EXPECT_EQ(t.memnodes[0].mode, NumaMode::kPreferred);
  EXPECT_EQ(t.memnodes[1].cellid, 1u);
  EXPECT_EQ(t.memnodes[1].mode, NumaMode::kInterleave);
  EXPECT_EQ(t.memnodes[1].nodeset, (IdSet{1}));
  EXPECT_EQ(t.memnodes[1].line, 17);
}

TEST_F(EverythingFixture, MemoryBacking) {
  const MemoryBacking& mb = def().memory_backing;
  EXPECT_TRUE(mb.present);
  EXPECT_TRUE(mb.hugepages);
  EXPECT_EQ(mb.hugepages_line, 20);
  ASSERT_EQ(mb.pages.size(), 2u);
  EXPECT_EQ(mb.pages[0].size_bytes, 2 * kMiB);
  EXPECT_EQ(mb.pages[0].guest_nodes, (IdSet{0}));
  EXPECT_EQ(mb.pages[1].size_bytes, kGiB);
  EXPECT_EQ(mb.pages[1].line, 22);
  EXPECT_TRUE(mb.nosharepages);
  EXPECT_TRUE(mb.locked);
  EXPECT_TRUE(mb.discard);
  EXPECT_EQ(mb.source, MemSource::kMemfd);
  EXPECT_EQ(mb.source_line, 26);
  EXPECT_EQ(mb.access, MemAccess::kShared);
  EXPECT_EQ(mb.allocation, AllocMode::kImmediate);
  EXPECT_EQ(mb.threads, 4u);
  EXPECT_EQ(mb.allocation_line, 28);
}

TEST_F(EverythingFixture, Os) {
  const OsDef& os = def().os;
  EXPECT_EQ(os.type, "hvm");
  EXPECT_EQ(os.arch, "x86_64");
  EXPECT_EQ(os.machine, "q35");
  EXPECT_EQ(os.kernel, "/boot/vmlinuz");
  EXPECT_EQ(os.initrd, "/boot/initrd.img");
  EXPECT_EQ(os.cmdline, "console=ttyS0 quiet");
  EXPECT_EQ(os.boot, (std::vector<std::string>{"hd", "network"}));
}

TEST_F(EverythingFixture, Cpu) {
  const CpuDef& cpu = def().cpu;
  EXPECT_EQ(cpu.mode, "host-passthrough");
  EXPECT_EQ(cpu.model, "qemu64");
  ASSERT_TRUE(cpu.topology);
  EXPECT_EQ(cpu.topology->sockets, 2u);
  EXPECT_EQ(cpu.topology->cores, 2u);
  EXPECT_EQ(cpu.topology->threads, 2u);
  EXPECT_EQ(cpu.numa_line, 42);
  ASSERT_EQ(cpu.cells.size(), 2u);
  EXPECT_EQ(cpu.cells[0].cpus, (IdSet{0, 1, 2, 3}));
  EXPECT_EQ(cpu.cells[0].memory_bytes, 8 * kGiB);
  EXPECT_EQ(cpu.cells[0].access, MemAccess::kShared);
  EXPECT_EQ(cpu.cells[0].discard, true);
  EXPECT_EQ(cpu.cells[1].id, 1u);
  EXPECT_EQ(cpu.cells[1].memory_bytes, 8 * kGiB);  // default unit KiB
  EXPECT_EQ(cpu.cells[1].access, MemAccess::kPrivate);
  EXPECT_EQ(cpu.cells[1].discard, false);
  EXPECT_EQ(cpu.cells[1].line, 44);
}

TEST_F(EverythingFixture, Devices) {
  const Devices& dev = def().devices;
  EXPECT_EQ(dev.emulator, "/usr/bin/qemu-system-x86_64");
  EXPECT_EQ(dev.emulator_line, 48);
  ASSERT_TRUE(dev.memballoon);
  EXPECT_EQ(dev.memballoon->model, "none");
  ASSERT_EQ(dev.disks.size(), 2u);
  EXPECT_EQ(dev.disks[0].type, "file");
  EXPECT_EQ(dev.disks[0].driver_type, "qcow2");
  EXPECT_EQ(dev.disks[0].source, "/var/lib/images/root.qcow2");
  EXPECT_EQ(dev.disks[0].target_dev, "vda");
  EXPECT_EQ(dev.disks[0].target_bus, "virtio");
  EXPECT_FALSE(dev.disks[0].readonly);
  EXPECT_EQ(dev.disks[1].type, "block");
  EXPECT_EQ(dev.disks[1].device, "cdrom");
  EXPECT_EQ(dev.disks[1].driver_type, "raw");
  EXPECT_EQ(dev.disks[1].source, "/dev/sr0");
  EXPECT_EQ(dev.disks[1].target_bus, "scsi");  // inferred from 'sda' like libvirt
  EXPECT_TRUE(dev.disks[1].readonly);
  ASSERT_EQ(dev.chardevs.size(), 2u);
  EXPECT_EQ(dev.chardevs[0].kind, "serial");
  EXPECT_EQ(dev.chardevs[0].type, "pty");
  EXPECT_EQ(dev.chardevs[0].target_type, "isa-serial");
  EXPECT_EQ(dev.chardevs[1].kind, "console");
  EXPECT_EQ(dev.chardevs[1].type, "file");
  EXPECT_EQ(dev.chardevs[1].path, "/var/log/guest-console.log");
  ASSERT_EQ(dev.memory.size(), 2u);
  const MemoryDevice& dimm = dev.memory[0];
  EXPECT_EQ(dimm.model, "dimm");
  EXPECT_EQ(dimm.access, MemAccess::kShared);
  EXPECT_EQ(dimm.discard, true);
  EXPECT_EQ(dimm.source_pagesize_bytes, 2 * kMiB);
  EXPECT_EQ(dimm.source_nodemask, (IdSet{0, 1}));
  EXPECT_EQ(dimm.size_bytes, kGiB);
  EXPECT_EQ(dimm.node, 1u);
  EXPECT_EQ(dimm.slot, 0u);
  EXPECT_EQ(dimm.base, 0x100000000u);
  EXPECT_EQ(dimm.line, 67);
  const MemoryDevice& nvdimm = dev.memory[1];
  EXPECT_EQ(nvdimm.model, "nvdimm");
  EXPECT_EQ(nvdimm.source_path, "/tmp/nvdimm");
  EXPECT_EQ(nvdimm.size_bytes, 512 * kMiB);
  EXPECT_EQ(nvdimm.slot, 1u);
  EXPECT_EQ(nvdimm.base, std::nullopt);
}

TEST(Parser, DefaultsOfAMinimalDomain) {
  DomainDef def = ParseDomainXml("<domain type='qemu'><name>m</name><memory>1024</memory></domain>", "m.xml");
  EXPECT_EQ(def.type, "qemu");
  EXPECT_EQ(def.memory_bytes, 1024 * kKiB);
  EXPECT_EQ(def.vcpu.count, 1u);
  EXPECT_EQ(def.vcpu.placement, Placement::kDefault);
  EXPECT_FALSE(def.current_memory_bytes);
  EXPECT_FALSE(def.max_memory_bytes);
  EXPECT_FALSE(def.numatune.present);
  EXPECT_FALSE(def.memory_backing.present);
  EXPECT_FALSE(def.cpu.topology);
  EXPECT_EQ(def.os.type, "hvm");
  EXPECT_TRUE(def.warnings.empty());
}

TEST(Parser, CellsWithoutIdsGetTheirIndex) {
  DomainDef def = ParseDomainXml(Doc("<cpu><numa>\n"
                                     "<cell cpus='0-1' memory='1' unit='GiB'/>\n"
                                     "<cell cpus='2-3' memory='3' unit='GiB'/>\n"
                                     "</numa></cpu>"),
                                 "c.xml");
  ASSERT_EQ(def.cpu.cells.size(), 2u);
  EXPECT_EQ(def.cpu.cells[0].id, 0u);
  EXPECT_EQ(def.cpu.cells[1].id, 1u);
  EXPECT_EQ(def.cpu.cells[1].line, 4);
}

TEST(Parser, HugepagesWithoutPagesMeansDefaultSize) {
  DomainDef def = ParseDomainXml(Doc("<memoryBacking><hugepages/></memoryBacking>"), "h.xml");
  EXPECT_TRUE(def.memory_backing.hugepages);
  EXPECT_TRUE(def.memory_backing.pages.empty());
}

TEST(Parser, MemoryMayComeFromCellsLikeLibvirt) {
  DomainDef def = ParseDomainXml("<domain type='kvm'><name>n</name><vcpu>2</vcpu><cpu><numa>"
                                 "<cell cpus='0' memory='1' unit='GiB'/><cell cpus='1' memory='2' unit='GiB'/>"
                                 "</numa></cpu></domain>",
                                 "n.xml");
  EXPECT_EQ(def.memory_bytes, 3 * kGiB);
}

TEST(Parser, UnsupportedElementsAndAttributesAreWarningsWithFileLineAndElement) {
  DomainDef def = ParseDomainXml(Doc("<blkiotune/>\n"
                                     "<devices>\n"
                                     "  <controller type='usb'><driver queues='2'/></controller>\n"
                                     "  <graphics type='vnc' keymap='de'/>\n"
                                     "  <input type='tablet' model='virtio'/>\n"
                                     "  <memballoon model='virtio' freepagereporting='on'/>\n"
                                     "</devices>"),
                                 "w.xml");
  ASSERT_EQ(def.warnings.size(), 5u);  // the <controller> is understood; its <driver> is not
  const int lines[] = {2, 4, 5, 6, 7};
  const char* elements[] = {"blkiotune", "driver", "graphics", "input", "memballoon"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(def.warnings[i].severity, Severity::kWarning);
    EXPECT_EQ(def.warnings[i].file, "w.xml");
    EXPECT_EQ(def.warnings[i].line, lines[i]);
    EXPECT_EQ(def.warnings[i].element, elements[i]);
  }
  EXPECT_NE(def.warnings[4].message.find("freepagereporting"), std::string::npos);
  EXPECT_EQ(def.warnings[1].ToString(), "w.xml:4: warning: <driver>: element not supported by qlaunch, ignored");
  ASSERT_TRUE(def.devices.memballoon);  // the element itself is understood
  EXPECT_EQ(def.devices.memballoon->model, "virtio");
}

TEST(Parser, VirtioMemHasBlockRequestedAndAPciAddress) {
  DomainDef def = ParseDomainXml(Doc("<devices>\n"
                                     "<memory model='virtio-mem'>\n"
                                     "<source><nodemask>0</nodemask><pagesize unit='KiB'>2048</pagesize></source>\n"
                                     "<target><size unit='GiB'>2</size><node>0</node><block unit='KiB'>2048</block>"
                                     "<requested unit='MiB'>512</requested></target>\n"
                                     "<address type='pci' domain='0x0000' bus='0x04' slot='0x00' function='0x0'/>\n"
                                     "</memory>\n"
                                     "<memory model='virtio-mem'><target><size unit='GiB'>1</size><node>0</node>"
                                     "<block unit='MiB'>2</block></target></memory>\n"
                                     "</devices>"),
                                 "m.xml");
  EXPECT_TRUE(def.warnings.empty());
  ASSERT_EQ(def.devices.memory.size(), 2u);
  const MemoryDevice& m = def.devices.memory[0];
  EXPECT_EQ(m.model, "virtio-mem");
  EXPECT_EQ(m.line, 3);
  EXPECT_EQ(m.size_bytes, 2 * kGiB);
  EXPECT_EQ(m.node, 0u);
  EXPECT_EQ(m.block_bytes, 2 * kMiB);
  EXPECT_EQ(m.requested_bytes, 512 * kMiB);
  EXPECT_EQ(m.source_pagesize_bytes, 2 * kMiB);
  EXPECT_EQ(m.pci_address.type, "pci");
  EXPECT_EQ(m.pci_address.bus, 4u);
  EXPECT_EQ(m.pci_address.slot, 0u);
  EXPECT_EQ(m.slot, std::nullopt);
  EXPECT_EQ(def.devices.memory[1].requested_bytes, std::nullopt);  // libvirt: nothing plugged at start
  EXPECT_EQ(def.devices.memory[1].pci_address.type, "");
}

TEST(Parser, UnsupportedValuesAreWarningsAndTheElementIsSkipped) {
  DomainDef def = ParseDomainXml(Doc("<devices>\n"
                                     "<disk type='network' device='disk'><target dev='vda' bus='virtio'/></disk>\n"
                                     "<disk type='file' device='floppy'><target dev='fda' bus='fdc'/></disk>\n"
                                     "<serial type='udp'/>\n"
                                     "<memory model='virtio-pmem'><target><size>1024</size></target></memory>\n"
                                     "<disk type='file'><source file='/a.img'/><target dev='vdb'/></disk>\n"
                                     "</devices>\n"
                                     "<os><type>xen</type></os>"),
                                 "v.xml");
  ASSERT_EQ(def.devices.disks.size(), 1u);
  EXPECT_EQ(def.devices.disks[0].source, "/a.img");
  EXPECT_EQ(def.devices.disks[0].target_bus, "virtio");
  EXPECT_TRUE(def.devices.chardevs.empty());
  EXPECT_TRUE(def.devices.memory.empty());
  ASSERT_EQ(def.warnings.size(), 5u);
  EXPECT_EQ(def.warnings[0].line, 3);
  EXPECT_NE(def.warnings[0].message.find("disk type 'network'"), std::string::npos);
  EXPECT_NE(def.warnings[1].message.find("disk device 'floppy'"), std::string::npos);
  EXPECT_NE(def.warnings[2].message.find("serial type 'udp'"), std::string::npos);
  EXPECT_NE(def.warnings[3].message.find("virtio-pmem"), std::string::npos);
  EXPECT_NE(def.warnings[4].message.find("os type 'xen'"), std::string::npos);
}

TEST(Parser, StrictTurnsEveryUnsupportedFindingIntoAnError) {
  std::string xml = Doc("<blkiotune/>\n<iothreads>1</iothreads>\n<os><bootmenu enable='yes' timeout='3'/></os>");
  EXPECT_EQ(ParseDomainXml(xml, "s.xml").warnings.size(), 3u);
  DiagnosticError e = ParseError(xml, ParseOptions{.strict = true});
  ASSERT_EQ(e.diagnostics().size(), 3u);
  for (const Diagnostic& d : e.diagnostics()) EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(e.diagnostics()[0].element, "blkiotune");
  EXPECT_EQ(e.diagnostics()[1].element, "iothreads");
  EXPECT_EQ(e.diagnostics()[2].line, 4);
  EXPECT_NE(e.diagnostics()[2].message.find("'timeout'"), std::string::npos);
  EXPECT_NO_THROW(ParseDomainXml(Doc(""), "ok.xml", ParseOptions{.strict = true}));
}

TEST(Parser, ForeignNamespacesAreUnsupportedElements) {
  DomainDef def = ParseDomainXml(
      "<domain type='kvm' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'><name>q</name>"
      "<memory>1024</memory><qemu:commandline><qemu:arg value='-s'/></qemu:commandline></domain>",
      "q.xml");
  ASSERT_EQ(def.warnings.size(), 1u);
  EXPECT_EQ(def.warnings[0].element, "qemu:commandline");
}

TEST(Parser, MetadataContentIsNotInspected) {
  DomainDef def = ParseDomainXml(Doc("<metadata><app:x xmlns:app='urn:a'><y/></app:x></metadata>"
                                     "<description>d</description>"),
                                 "md.xml");
  EXPECT_TRUE(def.warnings.empty());
}

TEST(Parser, SizeCapIsEnforcedForBuffersAndFiles) {
  std::string xml = Doc("");
  DiagnosticError e = ParseError(xml, ParseOptions{.max_bytes = 32});
  EXPECT_NE(std::string(e.what()).find("ParseOptions::max_bytes"), std::string::npos) << e.what();
  EXPECT_NO_THROW(ParseDomainXml(xml, "ok.xml", ParseOptions{.max_bytes = xml.size()}));

  std::string path = ::testing::TempDir() + "/qlaunch_domain_big.xml";
  {
    std::ofstream out(path);
    out << xml << std::string(200000, ' ');
  }
  try {
    ParseDomainFile(path, ParseOptions{.max_bytes = 100000});
    ADD_FAILURE() << "expected the size cap to trip";
  } catch (const DiagnosticError& err) {
    EXPECT_EQ(err.diagnostics().at(0).file, path);
    EXPECT_NE(err.diagnostics().at(0).message.find("larger than the limit of 100000 bytes"), std::string::npos);
  }
  EXPECT_NO_THROW(ParseDomainFile(path));
  std::remove(path.c_str());
}

TEST(Parser, FileErrorsNameThePath) {
  try {
    ParseDomainFile("/nonexistent/dir/dom.xml");
    ADD_FAILURE();
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostics().at(0).file, "/nonexistent/dir/dom.xml");
    EXPECT_NE(e.diagnostics().at(0).message.find("cannot open"), std::string::npos);
  }
  try {
    ParseDomainFile(::testing::TempDir());
    ADD_FAILURE();
  } catch (const DiagnosticError& e) {
    EXPECT_NE(e.diagnostics().at(0).message.find("directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace qlaunch::domain
