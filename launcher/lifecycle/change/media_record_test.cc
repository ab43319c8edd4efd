#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/media_record.h"
#include "launcher/lifecycle/change/running_def.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "common/diagnostic.h"
#include "domain/parser.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

const char* kXml =
    "<?xml version='1.0'?>\n"
    "<!-- a cdrom, full and empty -->\n"
    "<domain type='qemu'>\n"
    "  <name>m</name>\n"
    "  <memory unit='MiB'>64</memory>\n"
    "  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n"
    "  <devices>\n"
    "    <disk type='file' device='cdrom'>\n"
    "      <driver name='qemu' type='raw'/>\n"
    "      <source file='/old.iso'/>\n"
    "      <target dev='hdc' bus='ide'/>\n"
    "      <readonly/>\n"
    "    </disk>\n"
    "    <disk type='file' device='cdrom'>\n"
    "      <target dev='hdd' bus='ide'/>\n"
    "    </disk>\n"
    "  </devices>\n"
    "</domain>\n";

size_t Lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// Each disk's line, target and source as the parser reads them.
std::vector<std::string> Disks(const std::string& xml) {
  std::vector<std::string> out;
  for (const domain::Disk& d : domain::ParseDomainXml(xml, "t.xml").devices.disks)
    out.push_back(std::to_string(d.line) + " " + d.target_dev + " " + d.type + " '" + d.source + "'");
  return out;
}

TEST(MediaRecord, ChangeInsertAndEjectKeepEveryElementOnItsLine) {
  const std::string changed = WithDiskSource(kXml, "t.xml", "hdc", "file", "/new, with comma.iso");
  EXPECT_EQ(Disks(changed), (std::vector<std::string>{"8 hdc file '/new, with comma.iso'", "14 hdd file ''"}));
  EXPECT_EQ(changed.substr(0, 50), std::string(kXml).substr(0, 50)) << "the prolog stays";
  EXPECT_EQ(Lines(changed), Lines(kXml));

  const std::string inserted = WithDiskSource(changed, "t.xml", "hdd", "block", "/dev/sr0");
  EXPECT_EQ(Disks(inserted), (std::vector<std::string>{"8 hdc file '/new, with comma.iso'", "14 hdd block '/dev/sr0'"}));
  EXPECT_NE(inserted.find("<source dev=\"/dev/sr0\"/><target dev=\"hdd\""), std::string::npos) << inserted;
  EXPECT_EQ(Lines(inserted), Lines(kXml));

  const std::string ejected = WithDiskSource(inserted, "t.xml", "hdc", "", "");
  EXPECT_EQ(Disks(ejected), (std::vector<std::string>{"8 hdc file ''", "14 hdd block '/dev/sr0'"}));
  EXPECT_EQ(ejected.find("/new, with comma.iso"), std::string::npos);
  EXPECT_EQ(Lines(ejected), Lines(kXml));
}

TEST(MediaRecord, UnknownTargetAndBrokenXmlAreErrors) {
  EXPECT_THROW(WithDiskSource(kXml, "t.xml", "sdz", "file", "/x"), std::invalid_argument);
  EXPECT_THROW(WithDiskSource("<domain>", "t.xml", "hdc", "file", "/x"), DiagnosticError);
}

TEST(MediaRecord, RecordWritesRunningXmlAndNodesAndReadsThemBack) {
  char tmpl[] = "/tmp/media_record_test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  std::ofstream(dir / "domain.xml") << kXml;
  EXPECT_EQ(RunningXmlPath(dir), dir / "domain.xml");
  EXPECT_EQ(ReadMediaNodes(dir).next_node_index, 0u);

  RecordMediaChange(dir, "hdd", "file", "/a.iso", "libvirt-3", 4);
  EXPECT_EQ(RunningXmlPath(dir), dir / "running.xml");
  EXPECT_EQ(Disks(*ReadSmallFile(RunningXmlPath(dir))), (std::vector<std::string>{"8 hdc file '/old.iso'", "14 hdd file '/a.iso'"}));
  RecordMediaChange(dir, "hdc", "", "", "", 5);  // from running.xml: hdd keeps its medium
  EXPECT_EQ(Disks(*ReadSmallFile(RunningXmlPath(dir))), (std::vector<std::string>{"8 hdc file ''", "14 hdd file '/a.iso'"}));
  const MediaNodes m = ReadMediaNodes(dir);
  EXPECT_EQ(m.next_node_index, 5u);
  EXPECT_EQ(m.nodes, (std::map<std::string, std::string>{{"hdc", ""}, {"hdd", "libvirt-3"}}));
  std::ifstream given(dir / "domain.xml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(given), {}), kXml) << "domain.xml is the XML as given";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qlaunch::launcher
