// Test-only: libvirt's own test data, read from the source package of the libvirt installed on
// this machine (Debian 12: libvirt 9.0), which scripts/setup fetches and unpacks outside the
// repository (scripts/fetch-libvirt-source). Nothing of it is kept in this tree.
//
// Where: $QLAUNCH_LIBVIRT_SOURCE when set (an unpacked libvirt 9.0 source tree), else
// /opt/qlaunch/libvirt-source/src, where scripts/setup unpacks it.
// A missing source must fail the tests that use it (LibvirtCorpusProblem() says why and that
// scripts/setup fetches it), never abort test discovery: the lists below are empty then.
//
// Which cases: the names in LibvirtCaseNames(), the one list (memory backends, hugepages, guest
// and host NUMA, numatune, memory devices, mem-lock, thread-contexts). What libvirt 9.0 expects of
// each is told by which files its tests/qemuxml2argvdata/ holds (LibvirtCaseOf()).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "numa/host_topology.h"
#include "support/build_paths.h"

namespace qlaunch::testing {

inline std::filesystem::path LibvirtSourceDir() {
  const char* env = std::getenv("QLAUNCH_LIBVIRT_SOURCE");
  return (env && *env) ? std::filesystem::path(env) : std::filesystem::path("/opt/qlaunch/libvirt-source/src");
}
inline std::filesystem::path LibvirtCorpusCases() { return LibvirtSourceDir() / "tests/qemuxml2argvdata"; }
// The fake host of libvirt's capabilities tests (its /sys/devices/system): 4 nodes, 16 CPUs.
inline std::filesystem::path LibvirtLinuxBasicSystem() {
  return LibvirtSourceDir() / "tests/vircaps2xmldata/linux-basic/system";
}

// "" when libvirt's test data is there; otherwise what is missing and what to do.
inline std::string LibvirtCorpusProblem() {
  std::error_code ec;
  if (std::filesystem::is_directory(LibvirtCorpusCases(), ec) && std::filesystem::is_directory(LibvirtLinuxBasicSystem(), ec))
    return "";
  return "libvirt's test data is missing: no " + LibvirtCorpusCases().string() + " or " +
         LibvirtLinuxBasicSystem().string() +
         ". Run scripts/setup (as root): it fetches Debian's libvirt source package into "
         "/opt/qlaunch/libvirt-source (scripts/fetch-libvirt-source); or point QLAUNCH_LIBVIRT_SOURCE at an "
         "unpacked libvirt 9.0 source tree.";
}

// The cases qlaunch is held to: libvirt's qemuxml2argv cases about guest memory (backends,
// hugepages, memfd, file and shared memory, DIMMs), guest and host NUMA (cells, numatune,
// memnodes) and mem-lock, including the ones whose thread-contexts libvirt sets up. scripts/fuzz
// seeds from this list too (it reads the quoted names between this line and the closing brace).
inline const std::vector<std::string>& LibvirtCaseNames() {
  static const std::vector<std::string> names = {
      "cpu-numa-disjoint", "cpu-numa-memshared", "cpu-numa-no-memory-element", "cpu-numa1", "cpu-numa2",
      "cpu-numa3", "cputune-numatune", "fd-memory-no-numa-topology", "fd-memory-numa-topology",
      "fd-memory-numa-topology2", "fd-memory-numa-topology3", "hugepages-default", "hugepages-default-2M",
      "hugepages-default-5M", "hugepages-default-system-size", "hugepages-memaccess",
      "hugepages-memaccess-invalid", "hugepages-memaccess2", "hugepages-memaccess3", "hugepages-nodeset",
      "hugepages-nodeset-nonexist", "hugepages-numa-default", "hugepages-numa-default-2M",
      "hugepages-numa-default-dimm", "hugepages-numa-nodeset", "hugepages-numa-nodeset-nonexist",
      "hugepages-numa-nodeset-part", "hugepages-nvdimm", "hugepages-shared", "memfd-memory-default-hugepage",
      "memfd-memory-numa", "memory-hotplug", "memory-hotplug-dimm", "memory-hotplug-dimm-addr",
      "memory-hotplug-invalid-targetnode", "memory-hotplug-nonuma", "memory-hotplug-nvdimm",
      "memory-hotplug-virtio-mem", "memorybacking-set", "memorybacking-unset", "mlock-off", "mlock-on",
      "numatune-auto-nodeset-invalid", "numatune-auto-prefer", "numatune-memnode",
      "numatune-memnode-invalid-mode", "numatune-memnode-no-memory", "numatune-memnode-nocpu",
      "numatune-memnode-restrictive-mode", "numatune-memnode-unavailable-strict",
      "numatune-memnodes-problematic", "numatune-memory", "numatune-memory-invalid-nodeset",
      "numatune-no-vcpu", "numatune-static-nodeset-exceed-hostnode", "numatune-system-memory",
      "pages-dimm-discard", "pages-discard", "pages-discard-hugepages",
  };
  return names;
}

// What libvirt 9.0's qemuxml2argvtest expects of a case, from the files it has:
//  kArgs:       <name>.x86_64-latest.args, the command line for its newest x86_64 QEMU
//               capabilities (DO_TEST_CAPS_LATEST);
//  kLegacyArgs: only <name>.args, the command line for a hand-picked set of capability flags
//               (DO_TEST / DO_TEST_NOCAPS), older than any QEMU qlaunch supports;
//  kError:      <name>.x86_64-latest.err, or <name>.err without latest args: the error text;
//  kXmlOnly:    none of them (the case is only in libvirt's XML round-trip tests).
enum class LibvirtExpect { kArgs, kLegacyArgs, kError, kXmlOnly, kMissing };

struct LibvirtCase {
  std::string name;
  LibvirtExpect expect = LibvirtExpect::kMissing;
  std::filesystem::path xml;       // the input domain XML
  std::filesystem::path expected;  // the .args or .err file ("" for kXmlOnly / kMissing)
};

inline LibvirtCase LibvirtCaseOf(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = LibvirtCorpusCases();
  LibvirtCase c{name, LibvirtExpect::kMissing, dir / (name + ".xml"), {}};
  std::error_code ec;
  if (!fs::is_regular_file(c.xml, ec)) return c;
  const std::pair<const char*, LibvirtExpect> kinds[] = {{".x86_64-latest.args", LibvirtExpect::kArgs},
                                                         {".x86_64-latest.err", LibvirtExpect::kError},
                                                         {".err", LibvirtExpect::kError},
                                                         {".args", LibvirtExpect::kLegacyArgs}};
  for (const auto& [suffix, kind] : kinds)
    if (fs::is_regular_file(dir / (name + suffix), ec)) {
      c.expect = kind;
      c.expected = dir / (name + suffix);
      return c;
    }
  c.expect = LibvirtExpect::kXmlOnly;
  return c;
}

// The names of the listed cases libvirt 9.0 expects `kind` of, in list order; empty when the
// source is missing.
inline std::vector<std::string> LibvirtCases(LibvirtExpect kind) {
  std::vector<std::string> out;
  for (const std::string& name : LibvirtCaseNames())
    if (LibvirtCaseOf(name).expect == kind) out.push_back(name);
  return out;
}

// Every listed case that has an XML (whatever libvirt expects of it).
inline std::vector<std::string> LibvirtCasesWithXml() {
  std::vector<std::string> out;
  for (const std::string& name : LibvirtCaseNames())
    if (LibvirtCaseOf(name).expect != LibvirtExpect::kMissing) out.push_back(name);
  return out;
}

// A sysfs root (<root>/devices/system/...) showing libvirt's linux-basic tree: a directory in the
// build tree holding one symlink to it, made (or re-aimed) on first use.
inline std::filesystem::path LibvirtFakeHost() {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(QLAUNCH_BINARY_DIR) / "libvirt-fake-host";
  const fs::path link = root / "devices/system";
  std::error_code ec;
  if (fs::read_symlink(link, ec) == LibvirtLinuxBasicSystem()) return root;
  fs::create_directories(link.parent_path(), ec);
  // Beside it, then renamed over it: test binaries running at once all see a whole link.
  const fs::path tmp = link.parent_path() / (".system." + std::to_string(::getpid()));
  fs::remove(tmp, ec);
  fs::create_directory_symlink(LibvirtLinuxBasicSystem(), tmp, ec);
  fs::rename(tmp, link, ec);
  return root;
}

// The host libvirt 9.0's qemuxml2argvtest plans on: the linux-basic tree (nodes 0-3, CPUs 0-15)
// for CPUs; host nodes 0-7 all available (tests/qemuxml2argvmock.c: virNumaGetMaxNode() is 7),
// so nodes 4-7 here have no CPUs and no memory; hugetlbfs mounts /dev/hugepages2M (default) and
// /dev/hugepages1G (qemuTestDriverInit); every CPU usable.
inline numa::HostTopology LibvirtHost() {
  numa::ReadOptions opts;
  opts.sysfs_root = LibvirtFakeHost();
  numa::HostTopology host = numa::ReadHostTopology(opts);
  for (unsigned id = 4; id <= 7; ++id) {
    numa::HostNode node;
    node.id = id;
    host.nodes.push_back(node);
  }
  host.hugepage_sizes = {2ull << 20, 1ull << 30};
  host.default_hugepage_bytes = 2ull << 20;
  host.hugetlbfs_mounts = {{2ull << 20, "/dev/hugepages2M"}, {1ull << 30, "/dev/hugepages1G"}};
  host.usable_cpus = IdSet::Parse("0-15").value();
  return host;
}

// libvirt's error text (first line) without its error class ("XML error: ", ...). The wording of
// libvirt's test mock for an unavailable host node (tests/qemuxml2argvmock.c, "Mock: no numa node
// set is available at bit N") becomes the real libvirt's (src/util/virnuma.c).
inline std::string LibvirtReason(std::string text) {
  text = text.substr(0, text.find('\n'));
  for (const char* prefix : {"XML error: ", "unsupported configuration: ", "internal error: "})
    if (text.starts_with(prefix)) text = text.substr(std::string(prefix).size());
  const std::string mock = "Mock: no numa node set is available at bit ";
  if (text.starts_with(mock)) text = "NUMA node " + text.substr(mock.size()) + " is unavailable";
  return text;
}

// Difference 1 (docs/libvirt-differences.md): cases libvirt accepts and silently replaces
// <memory> by the cells' sum plus the memory devices in; qlaunch refuses the mismatch.
inline const std::set<std::string>& LibvirtMemoryMismatchCases() {
  static const std::set<std::string> cases = {"fd-memory-numa-topology2", "fd-memory-numa-topology3",
                                              "hugepages-numa-default",   "hugepages-numa-default-dimm",
                                              "hugepages-nvdimm",         "memory-hotplug-dimm",
                                              "memory-hotplug-dimm-addr", "memory-hotplug-nvdimm",
                                              "memory-hotplug-virtio-mem"};
  return cases;
}

// Cases libvirt 9.0 accepts only with the old capability flags it tests them with: their
// <topology> does not give the <vcpu> count, which libvirt's qemu_validate.c refuses for any QEMU
// with query-hotpluggable-cpus (2.7 and later) with "CPU topology doesn't match maximum vcpu
// count", as qlaunch does. Their memory is compared after the topology is made to agree (cores =
// vCPUs / (sockets * dies * clusters * threads), as libvirt's later copies of these cases do).
inline const std::set<std::string>& LibvirtTopologyMismatchCases() {
  static const std::set<std::string> cases = {"fd-memory-numa-topology2", "fd-memory-numa-topology3"};
  return cases;
}

}  // namespace qlaunch::testing
