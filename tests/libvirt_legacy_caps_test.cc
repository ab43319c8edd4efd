// libvirt 9.0's cases whose only expected command line is for a hand-picked set of QEMU
// capability flags (<name>.args from DO_TEST / DO_TEST_NOCAPS in its tests/qemuxml2argvtest.c),
// older than any QEMU qlaunch supports: libvirt then writes objects as key=value, a cell without
// a memory backend as `-numa node,...,mem=<MiB>`, file-backed main RAM as `-mem-path`
// (+ `-mem-prealloc`), and binds memory to host nodes through cgroups rather than the command
// line. qlaunch plans these with QEMU 7.2's capabilities; what both command lines say about the
// guest's memory must agree:
//  * every memory backend libvirt gives (key=value) matches ours property by property, as in
//    tests/libvirt_conformance_test.cc (libvirt gives no thread-context with these flags);
//  * a backend of ours libvirt has no object for is a cell's RAM that libvirt gives as mem=<MiB>
//    (then plain anonymous RAM of that size), or main RAM without guest NUMA that libvirt gives
//    as -m (a file on the -mem-path's page size, preallocated exactly with -mem-prealloc, or else
//    anonymous RAM of -m's size);
//  * the same guest NUMA cells with the same CPUs, the same -m (size, slots, maxmem), the same
//    DIMM devices and the same -overcommit mem-lock.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "qemu_cmd/planner.h"
#include "support/backend_compare.h"
#include "support/gtest_name.h"
#include "support/libvirt_args.h"
#include "support/libvirt_corpus.h"
#include "support/libvirt_plan.h"

namespace qlaunch {
namespace {

using nlohmann::json;
using testing::LibvirtExpect;

// Our rendered -object of every memory backend, by id.
std::map<std::string, json> RenderedBackends(const qemu::LaunchPlan& plan) {
  std::map<std::string, json> out;
  for (size_t i = 0; i + 1 < plan.argv.size(); ++i)
    if (plan.argv[i] == "-object" && plan.argv[i + 1].starts_with("{")) {
      json o = json::parse(plan.argv[i + 1]);
      if (o.value("qom-type", "").starts_with("memory-backend-")) out[o["id"]] = o;
    }
  return out;
}

std::vector<std::string> Values(const std::vector<std::string>& argv, const std::string& opt) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == opt) out.push_back(argv[i + 1]);
  return out;
}

std::string First(const std::vector<std::string>& values) { return values.empty() ? "" : values.front(); }

class LegacyCapsCase : public ::testing::TestWithParam<std::string> {};

TEST_P(LegacyCapsCase, MemoryMatchesLibvirtsCommandLine) {
  const std::string name = GetParam();
  ASSERT_EQ(testing::LibvirtCorpusProblem(), "");
  const testing::LibvirtArgs expected = testing::ReadLibvirtArgs(testing::LibvirtCaseOf(name).expected);
  const qemu::LaunchPlan plan = testing::PlanLibvirtCase(name);
  std::map<std::string, json> ours = RenderedBackends(plan);

  // libvirt's backends, key=value, against ours.
  for (const std::string& v : expected.Values("-object")) {
    if (!v.starts_with("memory-backend-")) continue;
    const json want = testing::LegacyObjectToJson(v);
    const std::string id = want["id"];
    SCOPED_TRACE(name + " backend " + id);
    ASSERT_TRUE(ours.contains(id)) << "libvirt has " << v;
    const json& got = ours.at(id);
    EXPECT_EQ(got["qom-type"], want["qom-type"]);
    EXPECT_EQ(got["size"], want["size"]);
    EXPECT_EQ(testing::BackendPageSize(got), testing::BackendPageSize(want));
    EXPECT_EQ(testing::NodesOf(got, "host-nodes"), testing::NodesOf(want, "host-nodes"));
    for (const std::string& d : testing::BackendObjectDifferences(id, want, got)) ADD_FAILURE() << d;
    ours.erase(id);
  }

  // Cells: the same ids and CPUs; a legacy mem= cell is our plain RAM backend of that size.
  std::vector<testing::NumaNodeOption> our_cells, libvirt_cells;
  for (const std::string& v : Values(plan.argv, "-numa")) our_cells.push_back(testing::ParseNumaNode(v));
  for (const std::string& v : expected.Values("-numa")) libvirt_cells.push_back(testing::ParseNumaNode(v));
  ASSERT_EQ(our_cells.size(), libvirt_cells.size()) << name;
  for (size_t i = 0; i < our_cells.size(); ++i) {
    const testing::NumaNodeOption &got = our_cells[i], &want = libvirt_cells[i];
    SCOPED_TRACE(name + " cell " + std::to_string(want.nodeid));
    EXPECT_EQ(got.nodeid, want.nodeid);
    EXPECT_EQ(got.cpus, want.cpus);
    if (!want.memdev.empty()) {
      EXPECT_EQ(got.memdev, want.memdev);
      continue;
    }
    ASSERT_TRUE(ours.contains(got.memdev)) << "cell without a backend of ours: " << got.memdev;
    const json& ram = ours.at(got.memdev);
    EXPECT_EQ(ram["qom-type"], "memory-backend-ram") << ram;
    EXPECT_EQ(ram["size"].get<uint64_t>(), want.mem_mib << 20) << ram;
    for (const char* key : {"share", "prealloc", "host-nodes", "policy"}) EXPECT_FALSE(ram.contains(key)) << ram;
    ours.erase(got.memdev);
  }

  // Main RAM without guest NUMA: libvirt's -m (and -mem-path, -mem-prealloc).
  const testing::MemoryOption want_m = testing::ParseMemoryOption(First(expected.Values("-m")));
  if (libvirt_cells.empty() && ours.contains("pc.ram")) {
    const json& ram = ours.at("pc.ram");
    const std::string mem_path = First(expected.Values("-mem-path"));
    EXPECT_EQ(ram["size"].get<uint64_t>(), want_m.size_kib << 10) << ram;
    if (!mem_path.empty()) {
      EXPECT_EQ(ram["qom-type"], "memory-backend-file") << ram;
      EXPECT_EQ(testing::BackendPageSize(ram), testing::PageSizeOfPath(mem_path)) << ram;
    } else {
      EXPECT_EQ(ram["qom-type"], "memory-backend-ram") << ram;
    }
    EXPECT_EQ(ram.value("prealloc", false), !expected.Values("-mem-prealloc").empty()) << ram;
    ours.erase("pc.ram");
  }
  for (const auto& [id, o] : ours) ADD_FAILURE() << name << ": a backend libvirt's command line has no counterpart for: " << o;

  EXPECT_EQ(testing::ParseMemoryOption(First(Values(plan.argv, "-m"))), want_m)
      << name << ": " << First(Values(plan.argv, "-m")) << " vs " << First(expected.Values("-m"));
  EXPECT_EQ(First(Values(plan.argv, "-overcommit")), First(expected.Values("-overcommit"))) << name;

  std::vector<json> libvirt_dimms, our_dimms;
  for (const std::string& v : expected.Values("-device"))
    if (v.find("dimm") != std::string::npos) libvirt_dimms.push_back(testing::DeviceToJson(v));
  for (const std::string& v : Values(plan.argv, "-device"))
    if (v.find("dimm") != std::string::npos) our_dimms.push_back(testing::DeviceToJson(v));
  EXPECT_EQ(our_dimms, libvirt_dimms) << name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, LegacyCapsCase, ::testing::ValuesIn(testing::LibvirtCases(LibvirtExpect::kLegacyArgs)),
                         [](const auto& info) { return testing::GtestName(info.param); });

}  // namespace
}  // namespace qlaunch
