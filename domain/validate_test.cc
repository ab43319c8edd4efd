// ValidateDomain: one row per rule (XML in, expected diagnostic out), plus checks that cannot come
// from XML (empty sets built in code) and that every problem is reported at once.
#include "domain/validate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "domain/parser.h"
#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;

constexpr Severity kError = Severity::kError;
constexpr Severity kWarning = Severity::kWarning;

struct Rule {
  std::string label;
  std::string xml;
  std::string message;
  int line;
  std::string element;
  Severity severity = kError;
};

// One 4 GiB cell holding all 4 vCPUs, on line 2.
const std::string kOneCell = "<cpu><numa><cell id='0' cpus='0-3' memory='4' unit='GiB'/></numa></cpu>";
// Two 2 GiB cells, the second on line 3.
const std::string kTwoCells =
    "<cpu><numa>\n<cell id='0' cpus='0-1' memory='2' unit='GiB'/>\n<cell id='1' cpus='2-3' memory='2' "
    "unit='GiB'/>\n</numa></cpu>";

// Hotplug-ready domain with one cell; `devices` starts on line 4.
std::string WithDimms(const std::string& devices, const std::string& max = "<maxMemory slots='2' unit='GiB'>16</maxMemory>") {
  return Doc(max + "\n" + kOneCell + "\n<devices>\n" + devices + "\n</devices>");
}

std::string Named(const std::string& name) {
  return "<domain type='kvm'><name>" + name + "</name><memory>1024</memory></domain>";
}

// A virtio-mem device of 1 GiB on node 0 with the given <target> tail (block, requested).
std::string VirtioMem(const std::string& tail, const std::string& source = "", const std::string& node = "<node>0</node>") {
  return "<memory model='virtio-mem'>" + source + "<target><size unit='GiB'>1</size>" + node + tail + "</target></memory>";
}

std::vector<Rule> Rules() {
  const std::string dimm = "<memory model='dimm'><target><size unit='GiB'>1</size><node>0</node></target>";
  return {
      // Name
      {"missing name", "<domain type='kvm'><memory>1024</memory></domain>", "missing domain name", 0, "name"},
      {"long name", Named(std::string(65, 'n')), "is longer than 64 characters", 1, "name"},
      {"slash in name", Named("a/b"), "name a/b cannot contain '/'", 1, "name"},
      {"dot name", Named(".hidden"), "domain name '.hidden' must not start with '.'", 1, "name"},
      {"control character in name", Named("a&#10;b"), "must not contain control characters", 1, "name"},
      // Memory sizes
      {"currentMemory above memory", Doc("<currentMemory unit='GiB'>8</currentMemory>"),
       "currentMemory (8388608 KiB) is larger than memory (4194304 KiB)", 2, "currentMemory", kWarning},
      {"cells do not add up", Doc("<cpu><numa><cell cpus='0-3' memory='1' unit='GiB'/></numa></cpu>"),
       "<memory> is 4194304 KiB but the NUMA cells add up to 1048576 KiB", 1, "memory", kError},
      // Sums that would wrap around 2^64 (found while hardening: 4 cells of 4 PiB "added up" to 4 GiB).
      {"cells add up beyond 2^63 bytes",
       Doc("<cpu><numa>\n"
           "<cell cpus='0' memory='4503599628419072' unit='KiB'/><cell cpus='1' memory='4503599628419072' unit='KiB'/>"
           "<cell cpus='2' memory='4503599628419072' unit='KiB'/><cell cpus='3' memory='4503599628419072' unit='KiB'/>"
           "\n</numa></cpu>"),
       "the NUMA cells add up to more than 9223372036854775807 bytes", 1, "memory"},
      {"cells without memory add up beyond 2^63 bytes",
       Doc("<cpu>\n<numa><cell cpus='0-1' memory='4' unit='EiB'/><cell cpus='2-3' memory='4' unit='EiB'/></numa>\n</cpu>",
           ""),
       "the NUMA cells add up to more than 9223372036854775807 bytes", 3, "numa"},
      {"maxMemory below memory", Doc("<maxMemory slots='2' unit='GiB'>2</maxMemory>\n" + kOneCell),
       "maximum memory size must be equal or greater than the actual memory size", 2, "maxMemory"},
      {"maxMemory without slots", Doc("<maxMemory unit='GiB'>8</maxMemory>\n" + kOneCell),
       "both maximum memory size and memory slot count must be specified", 2, "maxMemory"},
      {"maxMemory without NUMA", Doc("<maxMemory slots='1' unit='GiB'>8</maxMemory>"),
       "At least one numa node has to be configured when enabling memory hotplug", 2, "maxMemory"},
      // vCPUs
      {"topology product wraps around to the vcpu count",
       Doc("<cpu>\n<topology sockets='20' dies='5581' clusters='8681' cores='49477' threads='384773'/>\n</cpu>"),
       "(sockets*dies*clusters*cores*threads = more than 2^64, vcpu = 4)", 3, "topology"},
      {"current above count", Doc("", "<memory>1024</memory>", "<vcpu current='5'>4</vcpu>"),
       "maximum vCPU count must not be less than current vCPU count", 1, "vcpu"},
      {"current zero", Doc("", "<memory>1024</memory>", "<vcpu current='0'>4</vcpu>"),
       "current vCPU count must be greater than 0", 1, "vcpu"},
      {"topology mismatch", Doc("<cpu>\n<topology sockets='1' cores='2' threads='1'/>\n</cpu>"),
       "CPU topology doesn't match maximum vcpu count (sockets*dies*clusters*cores*threads = 2, vcpu = 4)", 3,
       "topology"},
      {"vcpupin out of range", Doc("<cputune>\n<vcpupin vcpu='4' cpuset='0'/>\n</cputune>"),
       "vcpupin for vcpu '4', but the domain has only 4 vCPUs", 3, "vcpupin"},
      {"duplicate vcpupin", Doc("<cputune><vcpupin vcpu='1' cpuset='0'/>\n<vcpupin vcpu='1' cpuset='1'/></cputune>"),
       "duplicate vcpupin for vcpu '1'", 3, "vcpupin"},
      // <vcpus> (the live XML of a domain whose vCPUs were plugged)
      {"vcpus enabled against current",
       Doc("<vcpus>\n<vcpu id='0' enabled='yes' hotpluggable='no'/><vcpu id='1' enabled='yes' hotpluggable='yes'/>"
           "<vcpu id='2' enabled='no' hotpluggable='yes'/><vcpu id='3' enabled='no' hotpluggable='yes'/>\n</vcpus>",
           "<memory unit='GiB'>4</memory>", "<vcpu current='3'>4</vcpu>"),
       "2 vCPUs are enabled in <vcpus>, but <vcpu> runs 3", 2, "vcpus"},
      {"vcpus missing one",
       Doc("<vcpus>\n<vcpu id='0' enabled='yes' hotpluggable='no'/><vcpu id='1' enabled='yes' hotpluggable='yes'/>"
           "\n<vcpu id='2' enabled='no' hotpluggable='yes'/>\n</vcpus>",
           "<memory unit='GiB'>4</memory>", "<vcpu current='2'>4</vcpu>"),
       "vcpu '3' is missing: <vcpus> lists every vCPU", 2, "vcpus"},
      {"vcpus id beyond the count",
       Doc("<vcpus><vcpu id='0' enabled='yes' hotpluggable='no'/><vcpu id='1' enabled='no' hotpluggable='yes'/>\n"
           "<vcpu id='2' enabled='no' hotpluggable='yes'/></vcpus>",
           "<memory unit='GiB'>4</memory>", "<vcpu current='1'>2</vcpu>"),
       "vcpu id '2' is beyond the 2 vCPUs of <vcpu>", 3, "vcpu"},
      {"vcpus disabled and not hotpluggable",
       Doc("<vcpus><vcpu id='0' enabled='yes' hotpluggable='no'/>\n<vcpu id='1' enabled='no' hotpluggable='no'/>"
           "</vcpus>",
           "<memory unit='GiB'>4</memory>", "<vcpu current='1'>2</vcpu>"),
       "vcpu '1' is disabled and not hotpluggable", 3, "vcpu"},
      {"vcpus without a boot vcpu",
       Doc("\n<vcpus><vcpu id='0' enabled='yes' hotpluggable='yes'/><vcpu id='1' enabled='no' hotpluggable='yes'/>"
           "</vcpus>",
           "<memory unit='GiB'>4</memory>", "<vcpu current='1'>2</vcpu>"),
       "no vCPU is enabled and not hotpluggable: QEMU starts at least vcpu '0'", 3, "vcpus"},
      // Guest NUMA cells
      {"cell cpus beyond vcpus",
       Doc("<cpu><numa>\n<cell cpus='0-4' memory='4' unit='GiB'/>\n</numa></cpu>"),
       "CPU IDs in <numa> exceed the <vcpu> count (cell 0 cpus 0-4, vcpu 4)", 3, "cell"},
      {"overlapping cells",
       Doc("<cpu><numa>\n<cell cpus='0-2' memory='2' unit='GiB'/>\n<cell cpus='2-3' memory='2' unit='GiB'/>\n</numa></cpu>"),
       "NUMA cells 0 and 1 have overlapping vCPU ids (2)", 4, "cell"},
      {"duplicate cell id",
       Doc("<cpu><numa>\n<cell id='0' cpus='0-1' memory='2' unit='GiB'/>\n<cell id='0' cpus='2-3' memory='2' "
           "unit='GiB'/>\n</numa></cpu>"),
       "Duplicate NUMA cell info for cell id '0'", 4, "cell"},
      {"cell ids with a gap",
       Doc("<cpu><numa>\n<cell id='0' cpus='0-1' memory='2' unit='GiB'/>\n<cell id='2' cpus='2-3' memory='2' "
           "unit='GiB'/>\n</numa></cpu>"),
       "Exactly one 'cell' element per guest NUMA cell allowed", 4, "cell"},
      // numatune
      {"memnode without cells", Doc("<numatune>\n<memnode cellid='0' mode='strict' nodeset='0'/>\n</numatune>"),
       "Element 'memnode' is invalid without any guest NUMA cells", 3, "memnode"},
      {"memnode for a missing cell",
       Doc(kOneCell + "\n<numatune>\n<memnode cellid='1' nodeset='0'/>\n</numatune>"),
       "Argument 'cellid' in memnode element must correspond to existing guest's NUMA cell", 4, "memnode"},
      {"duplicate memnode",
       Doc(kOneCell + "\n<numatune><memnode cellid='0' nodeset='0'/>\n<memnode cellid='0' nodeset='1'/></numatune>"),
       "Multiple memnode elements with cellid 0", 4, "memnode"},
      {"static placement without nodeset", Doc("<numatune>\n<memory mode='strict'/>\n</numatune>"),
       "nodeset for NUMA memory tuning must be set if 'placement' is 'static'", 3, "memory"},
      {"memnode with automatic placement",
       Doc(kOneCell + "\n<numatune><memory placement='auto'/>\n<memnode cellid='0' nodeset='0'/></numatune>"),
       "Per-node binding is not compatible with automatic NUMA placement.", 4, "memnode"},
      {"restrictive needs restrictive memnodes",
       Doc(kOneCell + "\n<numatune><memory mode='restrictive' nodeset='0'/>\n<memnode cellid='0' nodeset='0'/></numatune>"),
       "'restrictive' mode is required in memnode element", 4, "memnode"},
      // Hugepages and memoryBacking
      {"page names a missing cell",
       Doc(kTwoCells + "\n<memoryBacking><hugepages>\n<page size='2048' nodeset='0-2'/>\n</hugepages></memoryBacking>"),
       "hugepages: node 2 not found", 7, "page"},
      {"page names node 1 of a NUMA-less guest",
       Doc("<memoryBacking><hugepages>\n<page size='2048' nodeset='1'/>\n</hugepages></memoryBacking>"),
       "hugepages: node 1 not found", 3, "page"},
      {"page nodesets intersect",
       Doc(kTwoCells + "\n<memoryBacking><hugepages><page size='2048' nodeset='0-1'/>\n"
                       "<page size='1' unit='GiB' nodeset='1'/>\n</hugepages></memoryBacking>"),
       "nodeset attribute of hugepages of sizes 1048576 and 2048 intersect", 7, "page"},
      {"two default page sizes",
       Doc("<memoryBacking><hugepages><page size='2048'/>\n<page size='1' unit='GiB'/></hugepages></memoryBacking>"),
       "more than one hugepage size without nodeset", 3, "page"},
      {"hugepages with anonymous source",
       Doc("<memoryBacking><hugepages/>\n<source type='anonymous'/>\n</memoryBacking>"),
       "hugepages are not allowed with anonymous memory source", 3, "source"},
      {"hugepages on demand", Doc("<memoryBacking><hugepages/>\n<allocation mode='ondemand'/>\n</memoryBacking>"),
       "hugepages are not allowed with memory allocation ondemand", 3, "allocation"},
      {"zero allocation threads", Doc("<memoryBacking>\n<allocation mode='immediate' threads='0'/>\n</memoryBacking>"),
       "allocation threads must be at least 1", 3, "allocation"},
      // Memory devices (the first device is on line 5)
      {"dimm without maxMemory", Doc(kOneCell + "\n<devices>\n" + dimm + "</memory>\n</devices>"),
       "cannot use/hotplug a memory device when domain 'maxMemory' is not defined", 4, "memory"},
      {"dimm on a missing node",
       WithDimms("<memory model='dimm'><target><size unit='GiB'>1</size><node>3</node></target></memory>"),
       "can't add memory backend for guest node '3' as the guest has only '1' NUMA nodes configured", 5, "memory"},
      {"more dimms than slots",
       WithDimms(dimm + "</memory>\n" + dimm + "</memory>", "<maxMemory slots='1' unit='GiB'>16</maxMemory>"),
       "memory device count '2' exceeds slots count '1'", 5, "memory"},
      {"virtio-mem counts against the slots too",
       WithDimms(dimm + "</memory>\n" + VirtioMem("<block unit='MiB'>2</block>"), "<maxMemory slots='1' unit='GiB'>16</maxMemory>"),
       "memory device count '2' exceeds slots count '1'", 5, "memory"},
      {"dimm slot beyond slots", WithDimms(dimm + "<address type='dimm' slot='2'/></memory>"),
       "memory device slot '2' exceeds slots count '2'", 5, "memory"},
      {"dimm slot reused",
       WithDimms(dimm + "<address type='dimm' slot='1'/></memory>\n" + dimm + "<address type='dimm' slot='1'/></memory>"),
       "memory device slot '1' is already being used by another memory device", 6, "memory"},
      {"nvdimm without path",
       WithDimms("<memory model='nvdimm'><target><size unit='GiB'>1</size><node>0</node></target></memory>"),
       "nvdimm memory device needs <source><path>", 5, "memory"},
      {"nvdimm with discard",
       WithDimms("<memory model='nvdimm' discard='yes'><source><path>/tmp/nv</path></source><target><size "
                 "unit='GiB'>1</size></target></memory>"),
       "discard is not supported for nvdimms", 5, "memory"},
      // virtio-mem (libvirt 9.0's messages)
      {"virtio-mem without a node", WithDimms(VirtioMem("<block unit='MiB'>2</block>", "", "")),
       "target NUMA node needs to be specified for memory device", 5, "memory"},
      {"virtio-mem requested above size",
       WithDimms(VirtioMem("<block unit='MiB'>2</block><requested unit='GiB'>2</requested>")),
       "requested size must be smaller than or equal to @size (1048576KiB)", 5, "memory"},
      {"virtio-mem without a block", WithDimms(VirtioMem("")), "block size must be a power of two", 5, "memory"},
      {"virtio-mem block not a power of two", WithDimms(VirtioMem("<block unit='KiB'>3072</block>")),
       "block size must be a power of two", 5, "memory"},
      {"virtio-mem block below THP size", WithDimms(VirtioMem("<block unit='KiB'>1024</block>")),
       "block size too small, must be at least 2048KiB", 5, "memory"},
      {"virtio-mem block below the page size",
       WithDimms(VirtioMem("<block unit='MiB'>2</block>", "<source><pagesize unit='GiB'>1</pagesize></source>")),
       "block size too small, must be at least 1048576KiB", 5, "memory"},
      {"virtio-mem requested not whole blocks",
       WithDimms(VirtioMem("<block unit='MiB'>4</block><requested unit='MiB'>6</requested>")),
       "requested size must be an integer multiple of block size", 5, "memory"},
  };
}

TEST(Validate, EveryRuleNamesFileLineAndElement) {
  for (const Rule& rule : Rules()) {
    SCOPED_TRACE(rule.label);
    DomainDef def = ParseDomainXml(rule.xml, "v.xml");
    std::vector<Diagnostic> diags = ValidateDomain(def);
    ASSERT_EQ(diags.size(), 1u) << (diags.empty() ? std::string("no diagnostics") : DiagnosticError(diags).what());
    const Diagnostic& d = diags[0];
    EXPECT_EQ(d.severity, rule.severity);
    EXPECT_EQ(d.file, "v.xml");
    EXPECT_NE(d.message.find(rule.message), std::string::npos) << d.ToString();
    EXPECT_EQ(d.line, rule.line) << d.ToString();
    EXPECT_EQ(d.element, rule.element) << d.ToString();
  }
}

// A plugged vCPU must be the next in line: QEMU starts vCPUs 0..B-1 with -smp, and qlaunch plugs
// the next ones first to last, so a plugged vCPU after a gap (or a boot vCPU after a plugged one)
// is refused at each misplaced vCPU.
TEST(Validate, PluggedVcpusOutOfLineAreRefusedAtEachVcpu) {
  const DomainDef def = ParseDomainXml(
      Doc("<vcpus>\n<vcpu id='0' enabled='yes' hotpluggable='no'/>\n<vcpu id='1' enabled='no' hotpluggable='yes'/>\n"
          "<vcpu id='2' enabled='yes' hotpluggable='yes' order='2'/>\n<vcpu id='3' enabled='no' hotpluggable='yes'/>\n"
          "</vcpus>",
          "<memory unit='GiB'>4</memory>", "<vcpu current='2'>4</vcpu>"),
      "v.xml");
  const std::vector<Diagnostic> diags = ValidateDomain(def);
  ASSERT_EQ(diags.size(), 2u) << DiagnosticError(diags).what();
  EXPECT_EQ(diags[0].line, 4);
  EXPECT_NE(diags[0].message.find("vcpu '1' cannot be disabled here: QEMU starts vCPUs 0-0"), std::string::npos)
      << diags[0].ToString();
  EXPECT_EQ(diags[1].line, 5);
  EXPECT_NE(diags[1].message.find("vcpu '2' cannot be enabled and hotpluggable here"), std::string::npos)
      << diags[1].ToString();
}

TEST(Validate, ConsistentDomainsHaveNoFindings) {
  const std::string ok[] = {
      Doc(""),
      // Two boot vCPUs, the third plugged, the fourth waiting: libvirt's live XML after setvcpus 3.
      Doc("<vcpus><vcpu id='0' enabled='yes' hotpluggable='no' order='1'/><vcpu id='1' enabled='yes' "
          "hotpluggable='no' order='2'/><vcpu id='2' enabled='yes' hotpluggable='yes' order='3'/><vcpu id='3' "
          "enabled='no' hotpluggable='yes'/></vcpus>",
          "<memory unit='GiB'>4</memory>", "<vcpu current='3'>4</vcpu>"),
      Named(std::string(64, 'n')),
      Doc(kTwoCells + "\n<memoryBacking><hugepages><page size='2048' nodeset='0'/><page size='1' unit='GiB' "
                      "nodeset='1'/></hugepages></memoryBacking>"),
      Doc("<memoryBacking><hugepages><page size='2048' nodeset='0'/></hugepages></memoryBacking>"),  // node 0 of a NUMA-less guest
      Doc(kOneCell + "\n<numatune><memory mode='restrictive' nodeset='0'/><memnode cellid='0' mode='restrictive' "
                     "nodeset='1'/></numatune>"),
      Doc("<numatune><memory mode='strict'/></numatune>", "<memory>1024</memory>", "<vcpu placement='auto'>4</vcpu>"),
      Doc("<numatune><memory mode='strict' placement='auto'/></numatune>"),
      Doc("<cpu><topology sockets='2' dies='1' clusters='1' cores='1' threads='2'/></cpu>"),
      // libvirt's canonical form: <memory> = cells + memory devices.
      "<domain type='kvm'><name>d</name><maxMemory slots='2' unit='GiB'>16</maxMemory><memory unit='GiB'>5</memory>"
      "<vcpu>4</vcpu>" + kOneCell + "<devices>" +
          "<memory model='dimm'><target><size unit='GiB'>1</size><node>0</node></target></memory></devices></domain>",
      // Two virtio-mem devices beside a DIMM (libvirt counts all three against the slots).
      "<domain type='kvm'><name>d</name><maxMemory slots='3' unit='GiB'>16</maxMemory><memory unit='GiB'>7</memory>"
      "<vcpu>4</vcpu>" + kOneCell + "<devices>" +
          "<memory model='dimm'><target><size unit='GiB'>1</size><node>0</node></target></memory>" +
          VirtioMem("<block unit='MiB'>2</block><requested unit='MiB'>512</requested>") +
          VirtioMem("<block unit='GiB'>1</block>", "<source><pagesize unit='GiB'>1</pagesize></source>") +
          "</devices></domain>",
  };
  for (const std::string& xml : ok) {
    std::vector<Diagnostic> diags = ValidateDomain(ParseDomainXml(xml, "ok.xml"));
    EXPECT_TRUE(diags.empty()) << xml << "\n" << (diags.empty() ? "" : DiagnosticError(diags).what());
  }
}

TEST(Validate, CurrentMemoryIsComparedWithTheWrittenMemory) {
  // libvirt's memory-hotplug-dimm: <memory> = <currentMemory> = 1267710 KiB, while cells + DIMMs add up
  // to 1266687 KiB before QEMU's alignment. Only the cells mismatch is reported (an error: libvirt
  // silently uses the sum, we refuse the ambiguity).
  std::string xml =
      "<domain type='qemu'><name>d</name><maxMemory slots='16' unit='KiB'>1099511627776</maxMemory>\n"
      "<memory unit='KiB'>1267710</memory>\n<currentMemory unit='KiB'>1267710</currentMemory>\n"
      "<vcpu>2</vcpu><cpu><numa><cell id='0' cpus='0-1' memory='219136' unit='KiB'/></numa></cpu><devices>"
      "<memory model='dimm'><target><size unit='KiB'>523264</size><node>0</node></target></memory>"
      "<memory model='dimm'><target><size unit='KiB'>524287</size><node>0</node></target></memory>"
      "</devices></domain>";
  std::vector<Diagnostic> diags = ValidateDomain(ParseDomainXml(xml, "d.xml"));
  ASSERT_EQ(diags.size(), 1u) << DiagnosticError(diags).what();
  EXPECT_EQ(diags[0].element, "memory");
  EXPECT_EQ(diags[0].line, 2);
  EXPECT_EQ(diags[0].severity, kError);
}

TEST(Validate, ReportsEveryProblemAtOnce) {
  std::string xml =
      "<domain type='kvm'><name>.x/y</name><memory>1024</memory><vcpu current='3'>2</vcpu>\n"
      "<numatune><memnode cellid='0' nodeset='0'/></numatune>\n"
      "<memoryBacking><hugepages/><source type='anonymous'/></memoryBacking>\n"
      "</domain>";
  std::vector<Diagnostic> diags = ValidateDomain(ParseDomainXml(xml, "all.xml"));
  ASSERT_EQ(diags.size(), 5u) << DiagnosticError(diags).what();
  EXPECT_TRUE(HasErrors(diags));
  std::vector<int> lines;
  for (const Diagnostic& d : diags) lines.push_back(d.line);
  EXPECT_EQ(lines, (std::vector<int>{1, 1, 1, 2, 3}));
}

TEST(Validate, EmptySetsBuiltInCodeAreRejected) {
  DomainDef def = ParseDomainXml(Doc(kOneCell), "code.xml");
  def.vcpu.cpuset = IdSet{};
  def.cputune.emulatorpin = IdSet{};
  def.numatune.present = true;
  def.numatune.mode = NumaMode::kStrict;
  def.numatune.nodeset = IdSet{};
  def.numatune.memnodes.push_back(MemNode{0, NumaMode::kStrict, IdSet{}, 7});
  def.memory_backing.hugepages = true;
  def.memory_backing.pages.push_back(HugePage{0, IdSet{}, 9});
  std::vector<Diagnostic> diags = ValidateDomain(def);
  std::string all = DiagnosticError(diags).what();
  EXPECT_EQ(diags.size(), 5u) << all;
  EXPECT_NE(all.find("<vcpu>: Invalid value of 'cpuset': empty set"), std::string::npos) << all;
  EXPECT_NE(all.find("<emulatorpin>: Invalid value of 'cpuset': empty set"), std::string::npos) << all;
  EXPECT_NE(all.find("<memory>: Invalid value of 'nodeset': empty set"), std::string::npos) << all;
  EXPECT_NE(all.find("code.xml:7: error: <memnode>: Invalid value of 'nodeset': empty set"), std::string::npos) << all;
  EXPECT_EQ(all.find("zero"), std::string::npos) << all;  // size 0 is the documented "default size"
  EXPECT_NE(all.find("code.xml:9: error: <page>: Invalid value of 'nodeset': empty set"), std::string::npos) << all;
}

}  // namespace
}  // namespace qlaunch::domain
