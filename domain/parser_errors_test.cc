// Every kind of bad input, one row each: the snippet, the expected message, line and element.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "domain/parser.h"
#include "domain/test_util.h"

namespace qlaunch::domain {
namespace {

using testing::Doc;
using testing::ParseError;

struct BadInput {
  std::string label;
  std::string xml;
  std::string message;  // substring of the first diagnostic's message
  int line;
  std::string element;
};

// A document whose line 3 holds `line3` (and nothing else required on line 1/2 but name + type).
std::string Line3(const std::string& line3) {
  return "<domain type='kvm'>\n<name>a</name>\n" + line3 + "\n</domain>\n";
}

std::string Dimm(const std::string& inner, const std::string& attrs = "model='dimm'") {
  return Doc("<devices>\n<memory " + attrs + ">" + inner + "</memory>\n</devices>");  // <memory> on line 3
}

std::vector<BadInput> BadInputs() {
  const std::string target = "<target><size>1024</size></target>";
  return {
      // Document level
      {"empty", "", "file is empty", 0, ""},
      {"binary junk", "\x01\x02\x03 junk", "malformed XML", 1, ""},
      {"nul byte", std::string("<domain>\n\0</domain>", 19), "binary data (NUL byte at offset 9)", 2, ""},
      {"malformed", Doc("<cpu>\n<numa>\n</cpu>"), "Opening and ending tag mismatch: numa line 3 and cpu", 4, ""},
      {"xxe", "<!DOCTYPE domain [\n<!ENTITY x SYSTEM '/etc/shadow'>]>\n<domain type='kvm'><name>&x;</name></domain>",
       "DOCTYPE declares entity 'x'", 2, ""},
      {"root not domain", "<network>\n</network>", "root element is <network>, expected a libvirt <domain>", 1,
       "network"},
      {"missing type", "<domain><name>a</name><memory>1024</memory></domain>", "missing domain type attribute", 1,
       "domain"},
      {"duplicate singleton", Doc("<memoryBacking/>\n<memoryBacking/>"),
       "element <memoryBacking> may appear only once in <domain>", 3, "memoryBacking"},
      {"malformed uuid", Doc("<uuid>c7a5fdbd-edaf-9455-926a</uuid>"), "malformed uuid element", 2, "uuid"},
      // Memory sizes
      {"missing memory", "<domain type='kvm'>\n<name>a</name>\n</domain>",
       "Memory size must be specified via <memory> or in the <numa> configuration", 1, "domain"},
      {"zero memory", Line3("<memory>0</memory>"), "Memory size must be specified", 1, "domain"},
      {"unknown unit", Line3("<memory unit='XiB'>4</memory>"), "unknown suffix 'XiB'", 3, "memory"},
      {"garbage number", Line3("<memory>12abc</memory>"), "Invalid value '12abc' for element <memory>", 3, "memory"},
      {"negative number", Line3("<memory>-1</memory>"), "Invalid value '-1' for element <memory>", 3, "memory"},
      {"fractional number", Line3("<memory unit='GiB'>1.5</memory>"), "Invalid value '1.5'", 3, "memory"},
      {"overflowing size", Line3("<memory unit='EiB'>9</memory>"), "size value too large", 3, "memory"},
      {"overflowing digits", Line3("<memory>99999999999999999999999</memory>"), "expected a non-negative integer", 3,
       "memory"},
      {"bad currentMemory", Doc("<currentMemory>lots</currentMemory>"), "Invalid value 'lots' for element <currentMemory>",
       2, "currentMemory"},
      {"bad maxMemory slots", Doc("<maxMemory slots='-1'>8</maxMemory>"),
       "Invalid value for attribute 'slots' in element 'maxMemory': '-1'", 2, "maxMemory"},
      // vCPUs and cputune
      {"garbage vcpu", Doc("", "<memory>1024</memory>", "\n<vcpu>four</vcpu>"), "Invalid value 'four' for element <vcpu>",
       2, "vcpu"},
      {"zero vcpus", Doc("", "<memory>1024</memory>", "\n<vcpu>0</vcpu>"), "vcpu count must be greater than 0", 2, "vcpu"},
      {"duplicate vcpus id", Doc("<vcpus>\n<vcpu id='0' enabled='yes'/>\n<vcpu id='0' enabled='no'/></vcpus>"),
       "duplicate vcpu id '0'", 4, "vcpu"},
      {"huge vcpus", Doc("", "<memory>1024</memory>", "\n<vcpu>4294967296</vcpu>"), "Invalid value '4294967296'", 2, "vcpu"},
      {"bad placement", Doc("", "<memory>1024</memory>", "\n<vcpu placement='dynamic'>2</vcpu>"),
       "Invalid value for attribute 'placement' in element 'vcpu': 'dynamic'. expected static|auto", 2, "vcpu"},
      {"bad cpuset syntax", Doc("", "<memory>1024</memory>", "\n<vcpu cpuset='0-'>2</vcpu>"),
       "Invalid value of 'cpuset': '0-'", 2, "vcpu"},
      {"empty cpuset", Doc("", "<memory>1024</memory>", "\n<vcpu cpuset='1,^1'>2</vcpu>"),
       "Invalid value of 'cpuset': 1,^1", 2, "vcpu"},
      {"emulatorpin without cpuset", Doc("<cputune>\n<emulatorpin/>\n</cputune>"), "missing cpuset for emulatorpin", 3,
       "emulatorpin"},
      {"vcpupin without vcpu", Doc("<cputune>\n<vcpupin cpuset='1'/>\n</cputune>"),
       "Missing required attribute 'vcpu' in element 'vcpupin'", 3, "vcpupin"},
      {"vcpupin without cpuset", Doc("<cputune>\n<vcpupin vcpu='1'/>\n</cputune>"), "missing cpuset for vcpupin", 3,
       "vcpupin"},
      {"vcpupin bad vcpu", Doc("<cputune>\n<vcpupin vcpu='x' cpuset='1'/>\n</cputune>"),
       "Invalid value for attribute 'vcpu' in element 'vcpupin': 'x'", 3, "vcpupin"},
      // <cpu>
      {"bad cpu mode", Doc("<cpu mode='fast'/>"), "Invalid value for attribute 'mode' in element 'cpu': 'fast'", 2, "cpu"},
      {"topology without sockets", Doc("<cpu>\n<topology cores='2' threads='1'/>\n</cpu>"),
       "Missing required attribute 'sockets' in element 'topology'", 3, "topology"},
      {"topology zero cores", Doc("<cpu>\n<topology sockets='1' cores='0' threads='1'/>\n</cpu>"),
       "Invalid value for attribute 'cores' in element 'topology': Zero is not permitted", 3, "topology"},
      {"numa without cells", Doc("<cpu>\n<numa/>\n</cpu>"), "NUMA topology defined without NUMA cells", 3, "numa"},
      {"cell memAccess", Doc("<cpu><numa>\n<cell cpus='0' memory='4' unit='GiB' memAccess='foo'/>\n</numa></cpu>"),
       "Invalid value for attribute 'memAccess' in element 'cell': 'foo'", 3, "cell"},
      {"cell without memory", Doc("<cpu><numa>\n<cell cpus='0'/>\n</numa></cpu>"),
       "Missing required attribute 'memory' in element 'cell'", 3, "cell"},
      {"cell bad cpus", Doc("<cpu><numa>\n<cell cpus='0-a' memory='4'/>\n</numa></cpu>"), "Invalid value of 'cpus': '0-a'",
       3, "cell"},
      {"cell negative id", Doc("<cpu><numa>\n<cell id='-1' cpus='0' memory='4'/>\n</numa></cpu>"),
       "Invalid value for attribute 'id' in element 'cell': '-1'", 3, "cell"},
      {"cell bad discard", Doc("<cpu><numa>\n<cell cpus='0' memory='4' discard='maybe'/>\n</numa></cpu>"),
       "Invalid value for attribute 'discard' in element 'cell': 'maybe'", 3, "cell"},
      {"cell bad unit", Doc("<cpu><numa>\n<cell cpus='0' memory='4' unit='GiBs'/>\n</numa></cpu>"), "unknown suffix 'GiBs'",
       3, "cell"},
      // <numatune>
      {"numatune bad mode", Doc("<numatune>\n<memory mode='loose' nodeset='0'/>\n</numatune>"),
       "Invalid value for attribute 'mode' in element 'memory': 'loose'", 3, "memory"},
      {"numatune bad placement", Doc("<numatune>\n<memory placement='magic'/>\n</numatune>"),
       "Invalid value for attribute 'placement' in element 'memory': 'magic'", 3, "memory"},
      {"numatune bad nodeset", Doc("<numatune>\n<memory nodeset='0-2-3'/>\n</numatune>"),
       "Invalid value of 'nodeset': '0-2-3'", 3, "memory"},
      {"numatune empty nodeset", Doc("<numatune>\n<memory mode='strict' nodeset='0,^0'/>\n</numatune>"),
       "Invalid value of 'nodeset': 0,^0", 3, "memory"},
      {"memnode without cellid", Doc("<numatune>\n<memnode nodeset='0'/>\n</numatune>"),
       "Missing required cellid attribute in memnode element", 3, "memnode"},
      {"memnode without nodeset", Doc("<numatune>\n<memnode cellid='0'/>\n</numatune>"),
       "Missing required nodeset attribute in memnode element", 3, "memnode"},
      {"memnode bad mode", Doc("<numatune>\n<memnode cellid='0' mode='x' nodeset='0'/>\n</numatune>"),
       "Invalid value for attribute 'mode' in element 'memnode': 'x'", 3, "memnode"},
      // <memoryBacking>
      {"page unknown unit", Doc("<memoryBacking><hugepages>\n<page size='2' unit='MX'/>\n</hugepages></memoryBacking>"),
       "unknown suffix 'MX'", 3, "page"},
      {"page size zero", Doc("<memoryBacking><hugepages>\n<page size='0'/>\n</hugepages></memoryBacking>"),
       "hugepage size can't be zero", 3, "page"},
      {"page without size", Doc("<memoryBacking><hugepages>\n<page nodeset='0'/>\n</hugepages></memoryBacking>"),
       "Missing required attribute 'size' in element 'page'", 3, "page"},
      {"page bad nodeset", Doc("<memoryBacking><hugepages>\n<page size='2048' nodeset='x'/>\n</hugepages></memoryBacking>"),
       "Invalid value of 'nodeset': 'x'", 3, "page"},
      {"bad source type", Doc("<memoryBacking>\n<source type='shm'/>\n</memoryBacking>"),
       "unknown memoryBacking/source/type 'shm'", 3, "source"},
      {"bad access mode", Doc("<memoryBacking>\n<access mode='public'/>\n</memoryBacking>"),
       "unknown memoryBacking/access/mode 'public'", 3, "access"},
      {"bad allocation mode", Doc("<memoryBacking>\n<allocation mode='lazy'/>\n</memoryBacking>"),
       "unknown memoryBacking/allocation/mode 'lazy'", 3, "allocation"},
      {"bad allocation threads", Doc("<memoryBacking>\n<allocation threads='many'/>\n</memoryBacking>"),
       "Invalid value for attribute 'threads' in element 'allocation': 'many'", 3, "allocation"},
      {"negative allocation threads", Doc("<memoryBacking>\n<allocation threads='-8'/>\n</memoryBacking>"),
       "Invalid value for attribute 'threads' in element 'allocation': '-8'", 3, "allocation"},
      // <os>
      {"bad boot device", Doc("<os>\n<boot dev='usb'/>\n</os>"), "unknown boot device 'usb'", 3, "boot"},
      {"boot without dev", Doc("<os>\n<boot/>\n</os>"), "Missing required attribute 'dev' in element 'boot'", 3, "boot"},
      // Memory devices (<memory> is on line 3)
      {"dimm without model", Dimm(target, ""), "Missing required attribute 'model' in element 'memory'", 3, "memory"},
      {"dimm bad model", Dimm(target, "model='ram'"), "Invalid value for attribute 'model' in element 'memory': 'ram'", 3,
       "memory"},
      {"dimm bad access", Dimm(target, "model='dimm' access='both'"),
       "Invalid value for attribute 'access' in element 'memory': 'both'", 3, "memory"},
      {"dimm without target", Dimm(""), "missing <target> in memory device", 3, "memory"},
      {"virtio-mem bad block", Dimm("<target><size>1024</size><block unit='KiB'>2k</block></target>", "model='virtio-mem'"),
       "2k", 3, "block"},
      {"virtio-mem drive address",
       Dimm(target + "<address type='drive' controller='0' bus='0' target='0' unit='0'/>", "model='virtio-mem'"),
       "a virtio-mem device needs a PCI address, not 'drive' (expected pci)", 3, "memory"},
      {"dimm without size", Dimm("<target><node>0</node></target>"), "missing <size> in memory device <target>", 3,
       "target"},
      {"dimm bad size unit", Dimm("<target><size unit='kilo'>1</size></target>"), "unknown suffix 'kilo'", 3, "size"},
      {"dimm bad node", Dimm("<target><size>1024</size><node>one</node></target>"),
       "Invalid value 'one' for element <node>", 3, "node"},
      {"dimm empty nodemask", Dimm("<source><nodemask>1,^1</nodemask></source>" + target),
       "Invalid value of 'nodemask': 1,^1", 3, "nodemask"},
      {"dimm bad pagesize", Dimm("<source><pagesize>2M</pagesize></source>" + target),
       "Invalid value '2M' for element <pagesize>", 3, "pagesize"},
      {"dimm bad base", Dimm(target + "<address type='dimm' base='0xZZ'/>"),
       "Invalid value for attribute 'base' in element 'address': '0xZZ'", 3, "address"},
      {"dimm bad slot", Dimm(target + "<address type='dimm' slot='s'/>"),
       "Invalid value for attribute 'slot' in element 'address': 's'", 3, "address"},
      // Other devices
      {"memballoon without model", Doc("<devices>\n<memballoon/>\n</devices>"),
       "Missing required attribute 'model' in element 'memballoon'", 3, "memballoon"},
      {"memballoon bad model", Doc("<devices>\n<memballoon model='balloonz'/>\n</devices>"),
       "unknown memballoon model 'balloonz'", 3, "memballoon"},
      {"disk bad type", Doc("<devices>\n<disk type='cloud'><target dev='vda'/></disk>\n</devices>"),
       "unknown disk type 'cloud'", 3, "disk"},
      {"disk without target", Doc("<devices>\n<disk type='file'><source file='/a'/></disk>\n</devices>"),
       "missing <target> in disk", 3, "disk"},
      {"disk bad bus", Doc("<devices>\n<disk type='file'>\n<target dev='vda' bus='pcie'/></disk>\n</devices>"),
       "unknown disk bus 'pcie'", 4, "target"},
      {"disk name not libvirt's", Doc("<devices>\n<disk type='file'>\n<target dev='nvme0n1'/></disk>\n</devices>"),
       "Unknown disk name 'nvme0n1' and no address specified", 4, "target"},
      {"disk bad driver", Doc("<devices>\n<disk type='file'>\n<driver name='xen'/><target dev='vda'/></disk>\n</devices>"),
       "unsupported driver name 'xen' for disk 'vda'", 4, "driver"},
      {"file chardev without path", Doc("<devices>\n<serial type='file'/>\n</devices>"),
       "Missing source path attribute for char device", 3, "serial"},
      {"unknown chardev type", Doc("<devices>\n<console type='carrier-pigeon'/>\n</devices>"),
       "unknown console type 'carrier-pigeon'", 3, "console"},
  };
}

TEST(ParserErrors, EveryBadInputNamesFileLineAndElement) {
  for (const BadInput& row : BadInputs()) {
    SCOPED_TRACE(row.label);
    DiagnosticError e = ParseError(row.xml);
    ASSERT_FALSE(e.diagnostics().empty());
    const Diagnostic& d = e.diagnostics().front();
    EXPECT_EQ(d.severity, Severity::kError);
    EXPECT_EQ(d.file, "test.xml");
    EXPECT_NE(d.message.find(row.message), std::string::npos) << d.ToString();
    EXPECT_EQ(d.line, row.line) << d.ToString();
    EXPECT_EQ(d.element, row.element) << d.ToString();
    EXPECT_NE(std::string(e.what()).find("test.xml"), std::string::npos);
  }
}

TEST(ParserErrors, RenderedAsFileLineElement) {
  DiagnosticError e = ParseError(Line3("<memory unit='XiB'>4</memory>"));
  EXPECT_EQ(std::string(e.what()).rfind("test.xml:3: error: <memory>: unknown suffix 'XiB'", 0), 0u) << e.what();
}

}  // namespace
}  // namespace qlaunch::domain
