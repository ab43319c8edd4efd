// Hosts, QEMU capabilities and domains built in code for planner tests. The hosts mirror the
// sysfs fixtures in tests/fixtures/hosts/ (see the README there) and libvirt's fake test host;
// the caps are read from tests/fixtures/caps/qemu-{7.2,5.2}.json. Header-only so that module unit
// tests (qemu_cmd/*_test.cc) and the cross-module tests can both include it.
#pragma once

#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/domain_def.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "support/build_paths.h"

namespace qlaunch::testing {

inline constexpr uint64_t kPage2M = 2ull << 20;
inline constexpr uint64_t kPage1G = 1ull << 30;

// Builds a host from per-node CPU lists and a distance matrix (rows in node order).
inline numa::HostTopology MakeHost(const std::vector<std::pair<unsigned, IdSet>>& nodes,
                                   const std::vector<std::vector<unsigned>>& distances,
                                   std::map<uint64_t, std::string> mounts, uint64_t default_page,
                                   std::vector<uint64_t> page_sizes) {
  numa::HostTopology h;
  h.root = "/in-code";
  for (size_t i = 0; i < nodes.size(); ++i) {
    numa::HostNode n;
    n.id = nodes[i].first;
    n.cpus = nodes[i].second;
    n.memory_bytes = 16ull << 30;
    if (!distances.empty())
      for (size_t j = 0; j < nodes.size(); ++j) n.distances[nodes[j].first] = distances[i][j];
    for (uint64_t size : page_sizes) n.hugepages[size] = {1024, 1024};
    h.usable_cpus = h.usable_cpus.Union(n.cpus);
    h.nodes.push_back(std::move(n));
  }
  h.online_cpus = h.usable_cpus;
  h.hugetlbfs_mounts = std::move(mounts);
  h.default_hugepage_bytes = default_page;
  h.hugepage_sizes = std::move(page_sizes);
  return h;
}

// tests/fixtures/hosts/two-node: nodes 0 (CPUs 0-3) and 1 (4-7), 2M default, 2M and 1G mounted.
inline numa::HostTopology TwoNodeHost() {
  return MakeHost({{0, IdSet{0, 1, 2, 3}}, {1, IdSet{4, 5, 6, 7}}}, {{10, 21}, {21, 10}},
                  {{kPage2M, "/dev/hugepages"}, {kPage1G, "/dev/hugepages1G"}}, kPage2M, {kPage2M, kPage1G});
}

// tests/fixtures/hosts/four-node-cpuless: nodes 0 (CPUs 0-3), 1 (4-7), 2 and 3 CPU-less; node 2
// is nearest to node 0 (17), node 3 is equally far (28) from 0 and 1. 2M pages only.
inline numa::HostTopology FourNodeCpulessHost() {
  return MakeHost({{0, IdSet{0, 1, 2, 3}}, {1, IdSet{4, 5, 6, 7}}, {2, IdSet{}}, {3, IdSet{}}},
                  {{10, 21, 17, 28}, {21, 10, 28, 28}, {17, 28, 10, 28}, {28, 28, 28, 10}},
                  {{kPage2M, "/dev/hugepages"}}, kPage2M, {kPage2M});
}

// tests/fixtures/hosts/sparse-ids: nodes 0 (CPUs 0-3), 2 (4-7), 5 (CPU-less, nearest 2);
// default huge page 1G on /dev/hugepages, 2M on /dev/hugepages2M.
inline numa::HostTopology SparseIdsHost() {
  return MakeHost({{0, IdSet{0, 1, 2, 3}}, {2, IdSet{4, 5, 6, 7}}, {5, IdSet{}}},
                  {{10, 21, 28}, {21, 10, 17}, {28, 17, 10}},
                  {{kPage1G, "/dev/hugepages"}, {kPage2M, "/dev/hugepages2M"}}, kPage1G, {kPage2M, kPage1G});
}

// tests/fixtures/hosts/single-node: node 0 with CPUs 0-1.
inline numa::HostTopology SingleNodeHost() {
  return MakeHost({{0, IdSet{0, 1}}}, {{10}}, {{kPage2M, "/dev/hugepages"}}, kPage2M, {kPage2M, kPage1G});
}

// The capability fixtures tests/fixtures/caps/<name> (qemu-7.2.json, qemu-5.2.json), read
// from the source tree named by QLAUNCH_SOURCE_DIR (every test binary defines it).
inline qemu::QemuCaps LoadCapsFixture(const std::string& name) {
  const std::string path = std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/caps/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in).get<qemu::QemuCaps>();
}

// QEMU 7.2: thread-context, prealloc-context, JSON -object.
inline qemu::QemuCaps Caps72() { return LoadCapsFixture("qemu-7.2.json"); }
// QEMU 5.2: no thread-context, key=value -object, prealloc-threads.
inline qemu::QemuCaps Caps52() { return LoadCapsFixture("qemu-5.2.json"); }

// A small valid domain: 2 vCPUs, `memory` bytes, no guest NUMA.
inline domain::DomainDef MakeDomain(const std::string& name = "vm1", uint64_t memory = 2ull << 30) {
  domain::DomainDef d;
  d.file = "vm1.xml";
  d.type = "kvm";
  d.name = name;
  d.name_line = 2;
  d.memory_bytes = memory;
  d.memory_line = 3;
  d.vcpu.count = 2;
  d.os.machine = "pc";
  return d;
}

inline domain::NumaCell Cell(unsigned id, IdSet cpus, uint64_t bytes,
                             domain::MemAccess access = domain::MemAccess::kDefault) {
  domain::NumaCell c;
  c.id = id;
  c.cpus = std::move(cpus);
  c.memory_bytes = bytes;
  c.access = access;
  c.line = 20 + static_cast<int>(id);
  return c;
}

// Adds guest cells and sets <memory> to their sum.
inline void SetCells(domain::DomainDef& d, std::vector<domain::NumaCell> cells) {
  d.memory_bytes = 0;
  unsigned vcpus = 0;
  for (const auto& c : cells) {
    d.memory_bytes += c.memory_bytes;
    vcpus += static_cast<unsigned>(c.cpus.Size());
  }
  d.vcpu.count = vcpus;
  d.cpu.cells = std::move(cells);
  d.cpu.numa_line = 19;
}

inline void AddMemnode(domain::DomainDef& d, unsigned cell, domain::NumaMode mode, IdSet nodes) {
  d.numatune.present = true;
  d.numatune.line = 10;
  d.numatune.memnodes.push_back({cell, mode, std::move(nodes), 12 + static_cast<int>(cell)});
}

inline void SetNumatuneMemory(domain::DomainDef& d, domain::NumaMode mode, std::optional<IdSet> nodes) {
  d.numatune.present = true;
  d.numatune.line = 10;
  d.numatune.memory_line = 11;
  d.numatune.mode = mode;
  d.numatune.nodeset = std::move(nodes);
}

// <hugepages> with the given <page> elements (none: the host's default size).
inline void SetHugepages(domain::DomainDef& d, std::vector<domain::HugePage> pages = {}) {
  d.memory_backing.present = true;
  d.memory_backing.line = 5;
  d.memory_backing.hugepages = true;
  d.memory_backing.hugepages_line = 6;
  d.memory_backing.pages = std::move(pages);
}

inline domain::HugePage Page(uint64_t size, std::optional<IdSet> guest_nodes = std::nullopt, int line = 7) {
  domain::HugePage p;
  p.size_bytes = size;
  p.guest_nodes = std::move(guest_nodes);
  p.line = line;
  return p;
}

// Devices by position, as the tests wrote them before the models grew.
inline domain::Disk DiskOf(std::string type, std::string device, std::string driver, std::string source,
                           std::string dev, std::string bus, bool readonly, int line) {
  domain::Disk d;
  d.type = type;
  d.device = device;
  d.driver_type = driver;
  d.source = source;
  d.target_dev = dev;
  d.target_bus = bus;
  d.readonly = readonly;
  d.line = line;
  return d;
}

inline domain::CharDev CharDevOf(std::string kind, std::string type, std::string path, std::string target_type,
                                 int line) {
  domain::CharDev c;
  c.kind = kind;
  c.type = type;
  c.path = path;
  c.target_type = target_type;
  c.line = line;
  return c;
}

}  // namespace qlaunch::testing
