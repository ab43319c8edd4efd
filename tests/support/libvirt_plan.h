// Planning libvirt's own test cases (tests/support/libvirt_corpus.h) the way libvirt's
// qemuxml2argvtest does, and reading what its expected command lines say about memory: shared by
// the conformance tests against libvirt 9.0's expectations (tests/libvirt_conformance_test.cc,
// tests/libvirt_legacy_caps_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "qemu_cmd/planner.h"

namespace qlaunch::testing {

// Plans libvirt's case `name` as `qlaunch domxml-to-native --prealloc qemu` does (difference 7:
// QEMU preallocates, as under libvirt) on libvirt's test host (LibvirtHost()) with QEMU 7.2's
// capabilities. Difference 1: a case in LibvirtMemoryMismatchCases() must be refused for its
// <memory> mismatch (checked with gtest), and is then planned with libvirt's silent fix-up.
// Throws DiagnosticError when qlaunch refuses the case.
qemu::LaunchPlan PlanLibvirtCase(const std::string& name);

// The hugetlb page size a rendered memory backend asks for: memfd's hugetlbsize, or the page size
// of libvirt's test mounts (/dev/hugepages2M, /dev/hugepages1G) under a mem-path; 0 otherwise.
uint64_t BackendPageSize(const nlohmann::json& backend);
// A mem-path (or -mem-path) on libvirt's test mounts: their page size; 0 for any other path.
uint64_t PageSizeOfPath(const std::string& path);

// `key` of a rendered object as a list of node ids (absent: empty).
std::vector<unsigned> NodesOf(const nlohmann::json& obj, const char* key);

// A legacy `-object memory-backend-file,id=x,share=on,size=N,host-nodes=1-3,policy=bind` (libvirt
// for QEMUs without JSON -object) as the JSON libvirt would render: qom-type first, on/off as
// booleans, numbers as numbers, host-nodes (repeatable, ranges) as a sorted list.
nlohmann::json LegacyObjectToJson(const std::string& value);

// One -numa node option: `node,nodeid=0,cpus=0-3,cpus=8-11,mem=107` or `...,memdev=ram-node0`.
struct NumaNodeOption {
  unsigned nodeid = 0;
  std::vector<std::string> cpus;  // each cpus= value, in order
  std::string memdev;             // "" for the legacy mem=
  uint64_t mem_mib = 0;           // the legacy mem= (MiB); 0 with memdev
};
NumaNodeOption ParseNumaNode(const std::string& value);

// `-m 214` (MiB) or `-m size=219136k,slots=16,maxmem=8388608k`: {size KiB, slots, maxmem KiB}.
struct MemoryOption {
  uint64_t size_kib = 0;
  unsigned slots = 0;
  uint64_t maxmem_kib = 0;
  bool operator==(const MemoryOption&) const = default;
};
MemoryOption ParseMemoryOption(const std::string& value);

}  // namespace qlaunch::testing
