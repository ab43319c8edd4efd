// Test-only: where libvirt's own test corpus lives in this tree (tests/fixtures/libvirt, copied
// from libvirt's test suite; see its README.md and SOURCES.md). Needs QLAUNCH_SOURCE_DIR.
// A missing corpus must fail the tests that use it, never abort test discovery: list it with
// LibvirtCorpusFiles(), which returns nothing for a missing directory.
#pragma once

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "numa/host_topology.h"

namespace qlaunch::testing {

inline std::filesystem::path LibvirtCorpusDir() { return std::filesystem::path(QLAUNCH_SOURCE_DIR) / "tests/fixtures/libvirt"; }
inline std::filesystem::path LibvirtCorpusCases() { return LibvirtCorpusDir() / "cases"; }
inline std::filesystem::path LibvirtFakeHost() { return LibvirtCorpusDir() / "host"; }

// The names of the files in cases/ that end in `suffix`, sorted; empty when the directory is missing.
inline std::vector<std::string> LibvirtCorpusFiles(const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(LibvirtCorpusCases(), ec), end; !ec && it != end; it.increment(ec)) {
    std::string f = it->path().filename().string();
    if (f.size() > suffix.size() && f.ends_with(suffix)) out.push_back(f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// libvirt's test host: the fake sysfs tree plus what its mocks add (qemuxmlconftest.c):
// hugetlbfs mounts /dev/hugepages2M (default) and /dev/hugepages1G, every CPU usable.
inline numa::HostTopology LibvirtHost() {
  numa::ReadOptions opts;
  opts.sysfs_root = LibvirtFakeHost();
  numa::HostTopology host = numa::ReadHostTopology(opts);
  host.hugepage_sizes = {2ull << 20, 1ull << 30};
  host.default_hugepage_bytes = 2ull << 20;
  host.hugetlbfs_mounts = {{2ull << 20, "/dev/hugepages2M"}, {1ull << 30, "/dev/hugepages1G"}};
  host.usable_cpus = IdSet::Parse("0-15").value();
  return host;
}

// Difference 1 (docs/libvirt-differences.md): cases libvirt accepts and silently replaces
// <memory> by the cells' sum plus the memory devices in; qlaunch refuses the mismatch.
inline const std::set<std::string>& LibvirtMemoryMismatchCases() {
  static const std::set<std::string> cases = {"fd-memory-numa-topology2", "fd-memory-numa-topology3",
                                              "hugepages-numa-default",   "hugepages-numa-default-dimm",
                                              "memory-hotplug-dimm",      "memory-hotplug-dimm-addr"};
  return cases;
}

}  // namespace qlaunch::testing
