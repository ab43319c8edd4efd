// The planner against libvirt 9.x's own expected command lines
// (../shared/conformance/libvirt/cases/*.args). Domains are built in code from the case XMLs
// (the parser is tested on its own), the host is libvirt's fake test host. What qlaunch does
// on purpose differently is normalised away on both sides before comparing: thread-contexts
// (ours are shared and cover every preallocated backend), the automatic prealloc-threads,
// libvirt's path naming and its explicit "discard-data":false / canonical-path switches.
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "qemu_cmd/planner.h"
#include "tests/support/argv_parts.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using domain::MemAccess;
using domain::NumaMode;
using namespace qlaunch::testing;

constexpr uint64_t KiB = 1024;
constexpr const char* kBackingDir = "/var/lib/libvirt/qemu/ram";

std::filesystem::path CasesDir() {
  return std::filesystem::path(QLAUNCH_SOURCE_DIR) / ".." / "shared" / "conformance" / "libvirt" / "cases";
}

// The argv in a libvirt .args file: one "opt value" per line, shell-quoted JSON.
std::vector<std::string> ReadArgs(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> argv;
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() >= 2 && line.compare(line.size() - 2, 2, " \\") == 0) line.resize(line.size() - 2);
    if (line.empty() || line[0] != '-') continue;
    size_t sp = line.find(' ');
    argv.push_back(line.substr(0, sp));
    if (sp == std::string::npos) continue;
    std::string v = line.substr(sp + 1);
    if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
    argv.push_back(v);
  }
  return argv;
}

// libvirt's -device JSON -> our key=value form (same key order).
std::string DeviceJsonToKeyValue(const std::string& json) {
  auto j = nlohmann::ordered_json::parse(json);
  std::string out = j["driver"].get<std::string>();
  for (auto& [k, v] : j.items()) {
    if (k == "driver") continue;
    out += "," + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

std::vector<std::string> Normalize(std::vector<std::string> args, bool libvirt, bool keep_threads,
                                   const std::string& name) {
  std::vector<std::string> out;
  for (std::string a : args) {
    if (a.find(R"("qom-type":"thread-context")") != std::string::npos) continue;
    a = std::regex_replace(a, std::regex(R"(,"prealloc-context":"[^"]*")"), "");
    if (!keep_threads) a = std::regex_replace(a, std::regex(R"(,"prealloc-threads":[0-9]+)"), "");
    if (libvirt) {
      a = std::regex_replace(a, std::regex(R"(,"x-use-canonical-path-for-ramblock-id":false)"), "");
      a = std::regex_replace(a, std::regex(R"(,"discard-data":false)"), "");
      a = std::regex_replace(a, std::regex(R"(/libvirt/qemu/-1-[^"]*)"), "/qlaunch/" + name);
      a = std::regex_replace(a, std::regex(R"(/var/lib/libvirt/qemu/ram/-1-[^/"]*/[^"]*)"), kBackingDir);
      if (a.rfind("-device {", 0) == 0) a = "-device " + DeviceJsonToKeyValue(a.substr(8));
    }
    out.push_back(a);
  }
  return out;
}

struct CorpusCase {
  const char* name;
  std::function<domain::DomainDef()> domain;
};

domain::DomainDef Base(const std::string& name, const std::string& type, uint64_t memory_kib, unsigned vcpus) {
  auto d = MakeDomain(name, memory_kib * KiB);
  d.file = std::string(name) + ".xml";
  d.type = type;
  d.vcpu.count = vcpus;
  return d;
}

void FourHugeCells(domain::DomainDef& d) {
  SetHugepages(d, {Page(2048 * KiB, IdSet{1}), Page(1048576 * KiB, IdSet{0, 2, 3})});
  SetNumatuneMemory(d, NumaMode::kStrict, IdSet{0, 1, 2, 3});
  AddMemnode(d, 3, NumaMode::kStrict, IdSet{3});
  SetCells(d, {Cell(0, IdSet{0}, 1048576 * KiB), Cell(1, IdSet{1}, 1048576 * KiB, MemAccess::kShared),
               Cell(2, IdSet{2}, 1048576 * KiB, MemAccess::kPrivate), Cell(3, IdSet{3}, 1048576 * KiB)});
}

domain::MemoryDevice Dimm(uint64_t kib, unsigned node, unsigned slot) {
  domain::MemoryDevice m;
  m.model = "dimm";
  m.size_bytes = kib * KiB;
  m.node = node;
  m.slot = slot;
  return m;
}

std::vector<CorpusCase> Cases() {
  return {
      {"cpu-numa1",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 219100, 16);
         SetCells(d, {Cell(0, IdSet::Parse("0-7").value(), 109550 * KiB),
                      Cell(1, IdSet::Parse("8-15").value(), 109550 * KiB)});
         return d;
       }},
      {"cpu-numa-disjoint",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 219100, 16);
         SetCells(d, {Cell(0, IdSet::Parse("0-3,8-11").value(), 109550 * KiB),
                      Cell(1, IdSet::Parse("4-7,12-15").value(), 109550 * KiB)});
         return d;
       }},
      {"cpu-numa-memshared",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 219100, 16);
         SetCells(d, {Cell(0, IdSet::Parse("0-7").value(), 109550 * KiB, MemAccess::kShared),
                      Cell(1, IdSet::Parse("8-15").value(), 109550 * KiB, MemAccess::kPrivate)});
         return d;
       }},
      {"numatune-memnode",
       [] {
         auto d = Base("QEMUGuest", "qemu", 24682468, 32);
         AddMemnode(d, 0, NumaMode::kPreferred, IdSet{3});
         SetNumatuneMemory(d, NumaMode::kStrict, IdSet{0, 1, 2, 3});
         AddMemnode(d, 2, NumaMode::kStrict, IdSet::Parse("0-2,^1").value());
         SetCells(d, {Cell(0, IdSet{0}, 20002 * KiB), Cell(1, IdSet::Parse("1-27,29").value(), 660066 * KiB),
                      Cell(2, IdSet::Parse("28,30-31").value(), 24002400 * KiB)});
         return d;
       }},
      {"numatune-memnode-no-memory",
       [] {
         auto d = Base("QEMUGuest", "qemu", 65536, 2);
         AddMemnode(d, 0, NumaMode::kPreferred, IdSet{3});
         SetCells(d, {Cell(0, IdSet{0}, 32768 * KiB), Cell(1, IdSet{1}, 32768 * KiB)});
         return d;
       }},
      {"numatune-system-memory",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 219136, 2);
         SetNumatuneMemory(d, NumaMode::kStrict, IdSet{0});
         return d;
       }},
      {"cputune-numatune",
       [] {
         auto d = Base("dummy2", "kvm", 131072, 6);
         d.vcpu.current = 2;
         d.cputune.emulatorpin = IdSet{1, 2, 3};
         SetNumatuneMemory(d, NumaMode::kStrict, std::nullopt);
         d.numatune.placement = domain::Placement::kAuto;
         return d;
       }},
      {"mlock-on",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 219136, 1);
         d.memory_backing.present = true;
         d.memory_backing.locked = true;
         return d;
       }},
      {"hugepages-default",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 219100, 1);
         SetHugepages(d);
         return d;
       }},
      {"hugepages-memaccess3",
       [] {
         auto d = Base("fedora", "kvm", 4194304, 4);
         SetHugepages(d);
         d.memory_backing.access = MemAccess::kShared;
         return d;
       }},
      {"hugepages-numa-nodeset",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 4194304, 4);
         SetHugepages(d, {Page(2048 * KiB, IdSet{1}), Page(1048576 * KiB, IdSet{0, 2, 3})});
         SetCells(d, {Cell(0, IdSet{0}, 1048576 * KiB), Cell(1, IdSet{1}, 1048576 * KiB),
                      Cell(2, IdSet{2}, 1048576 * KiB), Cell(3, IdSet{3}, 1048576 * KiB)});
         return d;
       }},
      {"hugepages-shared",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 4194304, 4);
         FourHugeCells(d);
         return d;
       }},
      {"hugepages-memaccess",
       [] {
         auto d = Base("QEMUGuest1", "qemu", 4194304, 4);
         FourHugeCells(d);
         d.memory_backing.access = MemAccess::kPrivate;
         d.max_memory_bytes = 8388608 * KiB;
         d.max_memory_slots = 16;
         auto dimm = Dimm(524288, 1, 0);
         dimm.base = 0x100000000;
         d.devices.memory.push_back(dimm);
         d.memory_bytes += dimm.size_bytes;
         return d;
       }},
      {"memfd-memory-numa",
       [] {
         auto d = Base("instance-00000092", "kvm", 14680064, 8);
         d.max_memory_bytes = 1099511627776 * KiB;
         d.max_memory_slots = 16;
         SetHugepages(d, {Page(2048 * KiB)});
         d.memory_backing.source = domain::MemSource::kMemfd;
         d.memory_backing.access = MemAccess::kShared;
         d.memory_backing.allocation = domain::AllocMode::kImmediate;
         d.memory_backing.threads = 8;
         AddMemnode(d, 0, NumaMode::kPreferred, IdSet{3});
         SetCells(d, {Cell(0, IdSet::Parse("0-7").value(), 14680064 * KiB)});
         domain::MemoryDevice n = Dimm(523264, 0, 0);
         n.model = "nvdimm";
         n.source_path = "/tmp/nvdimm";
         d.devices.memory.push_back(n);
         return d;
       }},
      {"pages-dimm-discard",
       [] {
         auto d = Base("fedora", "qemu", 2621439, 2);
         d.max_memory_bytes = 1099511627776 * KiB;
         d.max_memory_slots = 16;
         SetCells(d, {Cell(0, IdSet{0, 1}, 1048576 * KiB)});
         auto a = Dimm(1048576, 0, 0);
         a.discard = false;
         a.source_nodemask = IdSet{1, 2, 3};
         a.source_pagesize_bytes = 1048576 * KiB;
         auto b = Dimm(524287, 0, 1);
         b.access = MemAccess::kPrivate;
         b.discard = true;
         d.devices.memory = {a, b};
         return d;
       }},
      {"fd-memory-numa-topology3",
       [] {
         auto d = Base("instance-00000092", "kvm", 14680064, 32);
         d.memory_backing.present = true;
         d.memory_backing.source = domain::MemSource::kFile;
         d.memory_backing.access = MemAccess::kShared;
         d.memory_backing.allocation = domain::AllocMode::kImmediate;
         SetCells(d, {Cell(0, IdSet::Parse("0-1,6-31").value(), 14680064 * KiB),
                      Cell(1, IdSet{2, 3}, 14680064 * KiB, MemAccess::kShared),
                      Cell(2, IdSet{4, 5}, 14680064 * KiB, MemAccess::kPrivate)});
         return d;
       }},
      {"memorybacking-unset",
       [] {
         auto d = Base("SomeDummyGuest", "qemu", 1048576, 2);
         d.memory_backing.present = true;
         d.memory_backing.source = domain::MemSource::kAnonymous;
         d.memory_backing.access = MemAccess::kPrivate;
         d.memory_backing.allocation = domain::AllocMode::kOnDemand;
         return d;
       }},
  };
}

TEST(PlannerVsLibvirt, MemoryArgumentsMatchOnceOurImprovementsAreSetAside) {
  if (!std::filesystem::exists(CasesDir())) GTEST_SKIP() << "no libvirt corpus at " << CasesDir();
  for (const CorpusCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const auto file = CasesDir() / (std::string(c.name) + ".x86_64-latest.args");
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    const auto libvirt_argv = ReadArgs(file);
    auto def = c.domain();
    PlanOptions opts;
    opts.memory_backing_dir = kBackingDir;
    LaunchPlan plan = PlanLaunch(def, LibvirtTestHost(), Caps72(), opts);
    bool keep_threads = false;
    for (const auto& a : libvirt_argv) keep_threads |= a.find("prealloc-threads") != std::string::npos;
    const auto theirs = Normalize(MemoryArgs(libvirt_argv), true, keep_threads, def.name);
    EXPECT_FALSE(theirs.empty());
    EXPECT_EQ(Normalize(MemoryArgs(plan.argv), false, keep_threads, def.name), theirs);
    EXPECT_EQ(OptionValue(plan.argv, "-m"), OptionValue(libvirt_argv, "-m"));
    EXPECT_EQ(OptionValue(plan.argv, "-overcommit"), OptionValue(libvirt_argv, "-overcommit"));
  }
}

TEST(PlannerVsLibvirt, SharedContextsWhereLibvirtMakesOnePerBackend) {
  // hugepages-shared: libvirt gives ram-node0..2 a context each, all with node-affinity
  // [0,1,2,3]; we give them one, and ram-node3 ([3]) its own.
  auto d = Base("QEMUGuest1", "qemu", 4194304, 4);
  FourHugeCells(d);
  LaunchPlan plan = PlanLaunch(d, LibvirtTestHost(), Caps72(), PlanOptions{});
  ASSERT_EQ(plan.contexts.size(), 2u);
  EXPECT_EQ(plan.contexts[0].id, "tc-ram-node0");
  EXPECT_EQ(plan.contexts[0].node_affinity, (IdSet{0, 1, 2, 3}));
  EXPECT_EQ(plan.contexts[1].id, "tc-ram-node3");
  EXPECT_EQ(plan.contexts[1].node_affinity, IdSet{3});
  std::vector<std::string> users;
  for (const auto& b : plan.backends) users.push_back(b.thread_context);
  EXPECT_EQ(users, (std::vector<std::string>{"tc-ram-node0", "tc-ram-node0", "tc-ram-node0", "tc-ram-node3"}));
}

TEST(PlannerVsLibvirt, MissingMountMessage) {
  // hugepages-default-5M.x86_64-latest.err
  if (!std::filesystem::exists(CasesDir())) GTEST_SKIP() << "no libvirt corpus at " << CasesDir();
  std::ifstream in(CasesDir() / "hugepages-default-5M.x86_64-latest.err");
  std::string want;
  std::getline(in, want);
  auto d = Base("NonExistentPageSize", "kvm", 4194304, 2);
  SetHugepages(d, {Page(5 * 1024 * KiB)});
  try {
    PlanLaunch(d, LibvirtTestHost(), Caps72(), PlanOptions{});
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    // libvirt prefixes "internal error: "; the message itself is the same.
    EXPECT_EQ("internal error: " + e.diagnostics().at(0).message, want);
  }
}

TEST(PlannerVsLibvirt, UnavailableNodeMessage) {
  // numatune-static-nodeset-exceed-hostnode.x86_64-latest.err: memnode nodeset 0-8 on 4 nodes.
  if (!std::filesystem::exists(CasesDir())) GTEST_SKIP() << "no libvirt corpus at " << CasesDir();
  std::ifstream in(CasesDir() / "numatune-static-nodeset-exceed-hostnode.x86_64-latest.err");
  std::string want;
  std::getline(in, want);
  auto d = Base("QEMUGuest", "qemu", 65536, 2);
  SetCells(d, {Cell(0, IdSet{0}, 32768 * KiB), Cell(1, IdSet{1}, 32768 * KiB)});
  AddMemnode(d, 0, NumaMode::kStrict, IdSet::Parse("0-8").value());
  try {
    PlanLaunch(d, LibvirtTestHost(), Caps72(), PlanOptions{});
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ("unsupported configuration: " + e.diagnostics().at(0).message, want);
  }
}

}  // namespace
}  // namespace qlaunch::qemu
