// Test-only: where the fixture sysfs trees live. Needs QLAUNCH_SOURCE_DIR (test binaries only).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "numa/host_topology.h"
#include "tests/support/libvirt_corpus.h"
#include "support/build_paths.h"

namespace qlaunch::numa::testing {

inline std::filesystem::path FixtureHost(const std::string& name) {
  return std::filesystem::path(QLAUNCH_SOURCE_DIR) / "tests/fixtures/hosts" / name;
}

// libvirt's fake host from its own test suite (tests/vircaps2xmldata/linux-basic of the libvirt
// source scripts/setup fetches): qlaunch::testing::LibvirtFakeHost() in tests/support/libvirt_corpus.h.
using qlaunch::testing::LibvirtFakeHost;

inline HostTopology ReadAt(const std::filesystem::path& root) {
  ReadOptions opts;
  opts.sysfs_root = root;
  return ReadHostTopology(opts);
}

inline HostTopology ReadFixture(const std::string& name) { return ReadAt(FixtureHost(name)); }

// A hand-built node (aggregate designated initialisers trip -Wmissing-field-initializers).
inline HostNode MakeNode(unsigned id, IdSet cpus = {}, std::map<unsigned, unsigned> distances = {}) {
  HostNode node;
  node.id = id;
  node.cpus = std::move(cpus);
  node.distances = std::move(distances);
  return node;
}

}  // namespace qlaunch::numa::testing
