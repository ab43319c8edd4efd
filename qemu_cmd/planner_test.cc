// End-to-end planner tests: DomainDef + HostTopology + QemuCaps built in code (mirroring the
// fixtures) -> LaunchPlan. Expectations are written from the rules in docs/planner.md.
// Over 400 lines for a reason: 14 end-to-end cases, each building its whole input in code.
#include "qemu_cmd/planner.h"

#include <algorithm>
#include <functional>

#include <gtest/gtest.h>

#include "tests/support/argv_parts.h"
#include "tests/support/plan_fixtures.h"
#include "tests/support/qemu_opts_split.h"

namespace qlaunch::qemu {
namespace {

using domain::AllocMode;
using domain::MemAccess;
using domain::MemSource;
using domain::NumaMode;
using namespace qlaunch::testing;

constexpr uint64_t GiB = 1ull << 30;

domain::DomainDef TwoCells(uint64_t each = GiB) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0, 1}, each), Cell(1, IdSet{2, 3}, each)});
  return d;
}

struct Scenario {
  const char* name;
  std::function<domain::DomainDef()> domain;
  std::function<numa::HostTopology()> host;
  QemuCaps caps;
  PreallocMode mode;
  std::vector<std::string> want;  // MemoryArgs
};

std::vector<Scenario> Scenarios() {
  const std::string huge = R"("mem-path":"/dev/hugepages/qlaunch/vm1")";
  return {
      {"two-node: a context per bound node",
       [] {
         auto d = TwoCells();
         SetHugepages(d, {Page(kPage2M)});
         AddMemnode(d, 0, NumaMode::kStrict, IdSet{0});
         AddMemnode(d, 1, NumaMode::kStrict, IdSet{1});
         return d;
       },
       TwoNodeHost, Caps72(), PreallocMode::kAuto,
       {R"(-object {"qom-type":"thread-context","id":"tc-ram-node0","node-affinity":[0]})",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node0",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[0],"policy":"bind","prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0",
        R"(-object {"qom-type":"thread-context","id":"tc-ram-node1","node-affinity":[1]})",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node1",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[1],"policy":"bind","prealloc-context":"tc-ram-node1"})",
        "-numa node,nodeid=1,cpus=2-3,memdev=ram-node1"}},

      {"two-node on 5.2: key=value, no contexts",
       [] {
         auto d = TwoCells();
         SetHugepages(d, {Page(kPage2M)});
         AddMemnode(d, 0, NumaMode::kStrict, IdSet{0});
         AddMemnode(d, 1, NumaMode::kStrict, IdSet{1});
         return d;
       },
       TwoNodeHost, Caps52(), PreallocMode::kAuto,
       {"-object memory-backend-file,id=ram-node0,mem-path=/dev/hugepages/qlaunch/vm1,prealloc=on,prealloc-threads=4,"
        "size=1073741824,host-nodes=0,policy=bind",
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0",
        "-object memory-backend-file,id=ram-node1,mem-path=/dev/hugepages/qlaunch/vm1,prealloc=on,prealloc-threads=4,"
        "size=1073741824,host-nodes=1,policy=bind",
        "-numa node,nodeid=1,cpus=2-3,memdev=ram-node1"}},

      {"two cells bound to the same node share one context",
       [] {
         auto d = TwoCells();
         SetHugepages(d);
         SetNumatuneMemory(d, NumaMode::kStrict, IdSet{0});
         return d;
       },
       TwoNodeHost, Caps72(), PreallocMode::kAuto,
       {R"(-object {"qom-type":"thread-context","id":"tc-ram-node0","node-affinity":[0]})",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node0",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[0],"policy":"bind","prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node1",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[0],"policy":"bind","prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=1,cpus=2-3,memdev=ram-node1"}},

      {"four-node: CPU-less nodes fall back to the nearest CPU nodes",
       [] {
         auto d = TwoCells();
         SetHugepages(d);
         AddMemnode(d, 0, NumaMode::kStrict, IdSet{2});
         AddMemnode(d, 1, NumaMode::kStrict, IdSet{3});
         return d;
       },
       FourNodeCpulessHost, Caps72(), PreallocMode::kAuto,
       {R"(-object {"qom-type":"thread-context","id":"tc-ram-node0","node-affinity":[0]})",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node0",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[2],"policy":"bind","prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0",
        R"(-object {"qom-type":"thread-context","id":"tc-ram-node1","node-affinity":[0,1]})",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node1",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":8,"size":1073741824,"host-nodes":[3],"policy":"bind","prealloc-context":"tc-ram-node1"})",
        "-numa node,nodeid=1,cpus=2-3,memdev=ram-node1"}},

      {"sparse node ids, default 1G pages",
       [] {
         auto d = TwoCells();
         SetHugepages(d);
         AddMemnode(d, 0, NumaMode::kStrict, IdSet{5});
         AddMemnode(d, 1, NumaMode::kPreferred, IdSet{0});
         return d;
       },
       SparseIdsHost, Caps72(), PreallocMode::kAuto,
       {R"(-object {"qom-type":"thread-context","id":"tc-ram-node0","node-affinity":[2]})",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node0",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[5],"policy":"bind","prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0",
        R"(-object {"qom-type":"thread-context","id":"tc-ram-node1","node-affinity":[0]})",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node1",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[0],"policy":"preferred","prealloc-context":"tc-ram-node1"})",
        "-numa node,nodeid=1,cpus=2-3,memdev=ram-node1"}},

      {"interleave with immediate allocation on plain RAM",
       [] {
         auto d = TwoCells();
         d.memory_backing.allocation = AllocMode::kImmediate;
         SetNumatuneMemory(d, NumaMode::kInterleave, IdSet{0, 1});
         return d;
       },
       TwoNodeHost, Caps72(), PreallocMode::kAuto,
       {R"(-object {"qom-type":"thread-context","id":"tc-ram-node0","node-affinity":[0,1]})",
        R"(-object {"qom-type":"memory-backend-ram","id":"ram-node0","prealloc":true,"prealloc-threads":8,"size":1073741824,"host-nodes":[0,1],"policy":"interleave","prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0",
        R"(-object {"qom-type":"memory-backend-ram","id":"ram-node1","prealloc":true,"prealloc-threads":8,"size":1073741824,"host-nodes":[0,1],"policy":"interleave","prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=1,cpus=2-3,memdev=ram-node1"}},

      {"mixed page sizes per cell, unbound: one context over all usable CPUs",
       [] {
         auto d = TwoCells();
         SetHugepages(d, {Page(kPage2M, IdSet{0}), Page(kPage1G, IdSet{1})});
         return d;
       },
       TwoNodeHost, Caps72(), PreallocMode::kAuto,
       {R"(-object {"qom-type":"thread-context","id":"tc-ram-node0","node-affinity":[0,1]})",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node0",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":8,"size":1073741824,"prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0",
        R"(-object {"qom-type":"memory-backend-file","id":"ram-node1","mem-path":"/dev/hugepages1G/qlaunch/vm1","prealloc":true,"prealloc-threads":8,"size":1073741824,"prealloc-context":"tc-ram-node0"})",
        "-numa node,nodeid=1,cpus=2-3,memdev=ram-node1"}},

      {"no cells: pc.ram, narrowed by emulatorpin",
       [] {
         auto d = MakeDomain();
         SetHugepages(d);
         d.cputune.emulatorpin = IdSet{4, 5};
         return d;
       },
       TwoNodeHost, Caps72(), PreallocMode::kAuto,
       {R"(-object {"qom-type":"thread-context","id":"tc-pc.ram","node-affinity":[1]})",
        R"(-object {"qom-type":"memory-backend-file","id":"pc.ram",)" + huge +
            R"(,"prealloc":true,"prealloc-threads":4,"size":2147483648,"prealloc-context":"tc-pc.ram"})"}},

      {"dimm with its own nodemask and page size",
       [] {
         auto d = MakeDomain();
         SetCells(d, {Cell(0, IdSet{0, 1}, GiB)});
         d.max_memory_bytes = 16 * GiB;
         d.max_memory_slots = 4;
         domain::MemoryDevice m;
         m.model = "dimm";
         m.size_bytes = GiB;
         m.node = 0;
         m.slot = 0;
         m.source_nodemask = IdSet{1};
         m.source_pagesize_bytes = kPage1G;
         d.devices.memory.push_back(m);
         return d;
       },
       TwoNodeHost, Caps72(), PreallocMode::kAuto,
       {R"(-object {"qom-type":"memory-backend-ram","id":"ram-node0","size":1073741824})",
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0",
        R"(-object {"qom-type":"thread-context","id":"tc-memdimm0","node-affinity":[1]})",
        R"(-object {"qom-type":"memory-backend-file","id":"memdimm0","mem-path":"/dev/hugepages1G/qlaunch/vm1","prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[1],"policy":"bind","prealloc-context":"tc-memdimm0"})",
        "-device pc-dimm,node=0,memdev=memdimm0,id=dimm0,slot=0"}},
  };
}

TEST(PlanLaunch, MemoryScenarios) {
  for (const Scenario& s : Scenarios()) {
    SCOPED_TRACE(s.name);
    PlanOptions opts;
    opts.prealloc = s.mode;
    LaunchPlan plan = PlanLaunch(s.domain(), s.host(), s.caps, opts);
    EXPECT_EQ(MemoryArgs(plan.argv), s.want);
  }
}

// Shared memfd backends on hugepages, bound to node 0 and 1; cell 2 is private.
domain::DomainDef SharedMemfdDomain() {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0}, GiB), Cell(1, IdSet{1}, GiB), Cell(2, IdSet{2}, GiB, MemAccess::kPrivate)});
  d.memory_backing.present = true;
  d.memory_backing.source = MemSource::kMemfd;
  d.memory_backing.access = MemAccess::kShared;
  SetHugepages(d, {Page(kPage2M)});
  AddMemnode(d, 0, NumaMode::kStrict, IdSet{0});
  AddMemnode(d, 1, NumaMode::kStrict, IdSet{1});
  AddMemnode(d, 2, NumaMode::kStrict, IdSet{1});
  return d;
}

TEST(PlanLaunch, SharedMemfdOnOldQemuIsPopulatedByTheLauncher) {
  PlanOptions opts;  // auto
  LaunchPlan plan = PlanLaunch(SharedMemfdDomain(), TwoNodeHost(), Caps52(), opts);
  EXPECT_EQ(MemoryArgs(plan.argv),
            (std::vector<std::string>{
                "-object memory-backend-file,id=ram-node0,mem-path=/proc/self/fd/3,share=on,prealloc=off,"
                "size=1073741824,host-nodes=0,policy=bind",
                "-numa node,nodeid=0,cpus=0,memdev=ram-node0",
                "-object memory-backend-file,id=ram-node1,mem-path=/proc/self/fd/4,share=on,prealloc=off,"
                "size=1073741824,host-nodes=1,policy=bind",
                "-numa node,nodeid=1,cpus=1,memdev=ram-node1",
                "-object memory-backend-memfd,id=ram-node2,hugetlb=on,hugetlbsize=2097152,share=off,prealloc=on,"
                "prealloc-threads=4,size=1073741824,host-nodes=1,policy=bind",
                "-numa node,nodeid=2,cpus=2,memdev=ram-node2",
            }));
  ASSERT_EQ(plan.backends.size(), 3u);
  EXPECT_EQ(plan.backends[0].prealloc, PreallocBy::kLauncher);
  EXPECT_EQ(plan.backends[0].launcher_fd, 3);
  EXPECT_EQ(plan.backends[0].page_size_bytes, kPage2M);  // the launcher makes a 2M hugetlb memfd
  EXPECT_EQ(plan.backends[0].launcher_threads, 4u);
  EXPECT_EQ(plan.backends[1].launcher_fd, 4);
  EXPECT_EQ(plan.backends[2].prealloc, PreallocBy::kQemu);
  EXPECT_TRUE(plan.contexts.empty());
}

TEST(PlanLaunch, SharedHugetlbMemfdOnQemu72GoesToTheLauncherUnlessAsked) {
  PlanOptions qemu72;
  qemu72.prealloc = PreallocMode::kQemu;
  LaunchPlan plan = PlanLaunch(SharedMemfdDomain(), TwoNodeHost(), Caps72(), qemu72);
  for (const auto& b : plan.backends) {
    EXPECT_EQ(b.prealloc, PreallocBy::kQemu) << b.id;
    EXPECT_EQ(b.type, BackendType::kMemfd) << b.id;
    EXPECT_EQ(b.prealloc_reason, "--prealloc qemu") << b.id;
  }
  ASSERT_EQ(plan.contexts.size(), 2u);  // node 0; node 1 shared by cells 1 and 2
  EXPECT_EQ(plan.contexts[0].id, "tc-ram-node0");
  EXPECT_EQ(plan.contexts[1].id, "tc-ram-node1");
  EXPECT_EQ(plan.backends[2].thread_context, "tc-ram-node1");

  // auto: the same plan as --prealloc launcher, each backend with its reason.
  PlanOptions launcher;
  launcher.prealloc = PreallocMode::kLauncher;
  const LaunchPlan by_auto = PlanLaunch(SharedMemfdDomain(), TwoNodeHost(), Caps72(), PlanOptions{});
  plan = PlanLaunch(SharedMemfdDomain(), TwoNodeHost(), Caps72(), launcher);
  EXPECT_EQ(by_auto.argv, plan.argv);
  EXPECT_NE(by_auto.backends[0].prealloc_reason.find("one after the other"), std::string::npos);
  EXPECT_NE(by_auto.backends[2].prealloc_reason.find("private memfd"), std::string::npos);
  EXPECT_EQ(plan.backends[0].prealloc, PreallocBy::kLauncher);
  EXPECT_EQ(plan.backends[1].prealloc, PreallocBy::kLauncher);
  EXPECT_EQ(plan.backends[2].prealloc, PreallocBy::kQemu);  // private: never the launcher
  ASSERT_EQ(plan.contexts.size(), 1u);
  EXPECT_EQ(plan.contexts[0].id, "tc-ram-node2");
  auto args = MemoryArgs(plan.argv);
  ASSERT_EQ(args.size(), 7u);
  EXPECT_EQ(args[0],
            R"(-object {"qom-type":"memory-backend-file","id":"ram-node0","mem-path":"/proc/self/fd/3","share":true,"prealloc":false,"size":1073741824,"host-nodes":[0],"policy":"bind"})");

  PlanOptions qemu;
  qemu.prealloc = PreallocMode::kQemu;
  plan = PlanLaunch(SharedMemfdDomain(), TwoNodeHost(), Caps52(), qemu);
  for (const auto& b : plan.backends) EXPECT_EQ(b.prealloc, PreallocBy::kQemu) << b.id;
  EXPECT_EQ(std::count_if(plan.argv.begin(), plan.argv.end(),
                          [](const std::string& a) { return a.find("/proc/self/fd") != std::string::npos; }),
            0);
}

TEST(PlanLaunch, PoolNeedsPerNodeAndPageSize) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0}, GiB), Cell(1, IdSet{1}, GiB), Cell(2, IdSet{2}, 2 * GiB)});
  SetHugepages(d, {Page(kPage2M, IdSet{0, 1}), Page(kPage1G, IdSet{2})});
  AddMemnode(d, 0, NumaMode::kStrict, IdSet{1});
  AddMemnode(d, 1, NumaMode::kStrict, IdSet{1});
  AddMemnode(d, 2, NumaMode::kStrict, IdSet{0, 1});
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps72(), PlanOptions{});
  ASSERT_EQ(plan.pool_needs.size(), 2u);
  EXPECT_EQ(plan.pool_needs[0].node, -1);
  EXPECT_EQ(plan.pool_needs[0].page_bytes, kPage1G);
  EXPECT_EQ(plan.pool_needs[0].pages, 2u);
  EXPECT_EQ(plan.pool_needs[1].node, 1);
  EXPECT_EQ(plan.pool_needs[1].page_bytes, kPage2M);
  EXPECT_EQ(plan.pool_needs[1].pages, 1024u);
}

TEST(PlanLaunch, FullArgvOnNewQemu) {
  auto d = MakeDomain();
  d.uuid = "c7a5fdbd-edaf-9455-926a-d65c16db1809";
  d.os.boot = {"hd", "network"};
  d.devices.memballoon.emplace().model = "virtio";
  d.cpu.mode = "host-passthrough";
  PlanOptions opts;
  opts.qmp_socket = "/run/qlaunch/vm1/qmp.sock";
  QemuCaps caps = Caps72();
  caps.kvm = false;
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), caps, opts);
  std::vector<std::string> want = {
      "/usr/bin/qemu-system-x86_64",
      "-name", "guest=vm1,debug-threads=on",
      "-S",
      "-machine", "pc,memory-backend=pc.ram,dump-guest-core=off",
      "-accel", "kvm",  // what the XML asks for, also where this QEMU cannot use KVM (see below)
      "-cpu", "host,migratable=on",  // libvirt 9.0 says migratable=on for host-passthrough and maximum
      "-m", "size=2097152k",
      "-object", R"({"qom-type":"memory-backend-ram","id":"pc.ram","size":2147483648})",
      "-overcommit", "mem-lock=off",
      "-smp", "2,sockets=2,cores=1,threads=1",
      "-uuid", "c7a5fdbd-edaf-9455-926a-d65c16db1809",
      "-display", "none",
      "-no-user-config",
      "-nodefaults",
      "-chardev", "socket,id=qmp,path=/run/qlaunch/vm1/qmp.sock,server=on,wait=off",
      "-mon", "chardev=qmp,mode=control",
      "-rtc", "base=utc",    // libvirt 9.0 always gives the clock's base
      "-no-acpi",            // and on x86, no <acpi/> in <features> is -no-acpi
      "-boot", "strict=on",  // the order is in each device's bootindex
      "-device", "piix3-usb-uhci,id=usb,bus=pci.0,addr=0x1.0x2",  // pc's default USB, as libvirt adds it
      "-device", "virtio-balloon-pci,id=balloon0,bus=pci.0,addr=0x2",  // pci.0 from slot 2, as libvirt
      "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
  };
  EXPECT_EQ(plan.argv, want);
  EXPECT_EQ(plan.emulator, "/usr/bin/qemu-system-x86_64");
  EXPECT_EQ(plan.name, "vm1");
  EXPECT_EQ(plan.initial_memory_bytes, 2 * GiB);
  // KVM was asked for but the caps say it is unusable: still a KVM plan, and one note that says
  // this host cannot run it (no fallback to TCG, no "max" for host-passthrough).
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_EQ(plan.notes[0].message, kKvmUnusableNote);
  EXPECT_EQ(plan.notes[0].element, "domain");
  EXPECT_EQ(plan.notes[0].severity, Severity::kWarning);
}

TEST(PlanLaunch, KvmAndLockedMemory) {
  auto d = MakeDomain();
  d.cpu.mode = "host-passthrough";
  d.memory_backing.locked = true;
  QemuCaps caps = Caps72();
  caps.kvm = true;
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), caps, PlanOptions{});
  auto at = [&](const std::string& opt) {
    auto it = std::find(plan.argv.begin(), plan.argv.end(), opt);
    return it == plan.argv.end() || it + 1 == plan.argv.end() ? std::string("<absent>") : *(it + 1);
  };
  EXPECT_EQ(at("-accel"), "kvm");
  EXPECT_EQ(at("-cpu"), "host,migratable=on");
  EXPECT_EQ(at("-overcommit"), "mem-lock=on");
  EXPECT_EQ(at("-chardev"), "<absent>");  // no qmp_socket given
  EXPECT_TRUE(plan.notes.empty());

  d.type = "qemu";
  d.cpu.mode.clear();
  d.cpu.model = "qemu64";
  plan = PlanLaunch(d, TwoNodeHost(), caps, PlanOptions{});
  EXPECT_EQ(at("-accel"), "tcg");
  EXPECT_EQ(at("-cpu"), "qemu64");
  d.cpu.model.clear();
  plan = PlanLaunch(d, TwoNodeHost(), caps, PlanOptions{});
  EXPECT_EQ(at("-cpu"), "<absent>");
}

TEST(PlanLaunch, EmulatorChoice) {
  auto d = MakeDomain();
  d.devices.emulator = "/from/xml";
  QemuCaps caps = Caps72();
  PlanOptions opts;
  opts.emulator = "/from/options";
  EXPECT_EQ(PlanLaunch(d, TwoNodeHost(), caps, opts).argv.at(0), "/usr/bin/qemu-system-x86_64");
  caps.binary.clear();
  EXPECT_EQ(PlanLaunch(d, TwoNodeHost(), caps, opts).argv.at(0), "/from/options");
  EXPECT_EQ(PlanLaunch(d, TwoNodeHost(), caps, PlanOptions{}).argv.at(0), "/from/xml");
}

TEST(PlanLaunch, SmpAndMemoryHotplugOptions) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0, 1, 2, 3}, GiB), Cell(1, IdSet{4, 5, 6, 7}, GiB)});
  d.cpu.topology = domain::CpuTopology{2, 1, 1, 2, 2, 30};
  d.vcpu.current = 4;
  d.max_memory_bytes = 16 * GiB;
  d.max_memory_slots = 8;
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps52(), PlanOptions{});
  auto smp = std::find(plan.argv.begin(), plan.argv.end(), "-smp");
  ASSERT_NE(smp, plan.argv.end());
  EXPECT_EQ(*(smp + 1), "4,maxcpus=8,sockets=2,dies=1,cores=2,threads=2");
  auto m = std::find(plan.argv.begin(), plan.argv.end(), "-m");
  EXPECT_EQ(*(m + 1), "size=2097152k,slots=8,maxmem=16777216k");
}

TEST(PlanLaunch, PluggedVcpusArePluggedBeforeCont) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0, 1, 2, 3}, GiB), Cell(1, IdSet{4, 5, 6, 7}, GiB)});
  d.vcpu.count = 8;
  d.vcpu.current = 4;
  EXPECT_EQ(PlanLaunch(d, TwoNodeHost(), Caps72(), PlanOptions{}).plug_vcpus_to, 0u) << "none plugged: -smp 4";
  for (unsigned id = 0; id < 8; ++id) d.vcpu.states.push_back({id, id < 4, id >= 2, 0, 0});
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps72(), PlanOptions{});
  EXPECT_EQ(plan.plug_vcpus_to, 4u);
  auto smp = std::find(plan.argv.begin(), plan.argv.end(), "-smp");
  ASSERT_NE(smp, plan.argv.end());
  EXPECT_EQ((smp + 1)->substr(0, 12), "2,maxcpus=8,");
  EXPECT_EQ(ToJson(plan).value("plug_vcpus_to", 0u), 4u);
}

TEST(PlanLaunch, UserStringsCannotAddOptions) {
  const std::string evil = "x,debug-threads=on -device foo";
  auto d = MakeDomain(evil);
  SetHugepages(d);
  d.os.machine = "pc,usb";
  d.devices.chardevs.push_back(testing::CharDevOf("serial", "file", "/tmp/a,b,logfile=/etc/passwd", "", 60));
  PlanOptions opts;
  opts.qmp_socket = "/run/q,server=off/qmp.sock";
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps52(), opts);
  auto value = [&](const std::string& opt, size_t nth = 0) -> std::string {
    for (size_t i = 0; i + 1 < plan.argv.size(); ++i)
      if (plan.argv[i] == opt && nth-- == 0) return plan.argv[i + 1];
    return "<absent>";
  };
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(QemuOptsPairs(value("-name"), false), (Pairs{{"guest", evil}, {"debug-threads", "on"}}));
  EXPECT_EQ(QemuOptsPairs(value("-machine")), (Pairs{{"", "pc,usb"}, {"memory-backend", "pc.ram"}, {"dump-guest-core", "off"}}));
  EXPECT_EQ(QemuOptsPairs(value("-chardev", 0)),
            (Pairs{{"", "socket"}, {"id", "qmp"}, {"path", "/run/q,server=off/qmp.sock"}, {"server", "on"},
                   {"wait", "off"}}));
  EXPECT_EQ(QemuOptsPairs(value("-chardev", 1)),
            (Pairs{{"", "file"}, {"id", "charserial0"}, {"path", "/tmp/a,b,logfile=/etc/passwd"}}));
  auto obj = QemuOptsPairs(value("-object"));
  ASSERT_GE(obj.size(), 3u);
  EXPECT_EQ(obj[2], (std::pair<std::string, std::string>{"mem-path", "/dev/hugepages/qlaunch/" + evil}));
  // No -device beyond what the plan itself adds (as libvirt: pc's default USB controller, the
  // serial port, the default balloon), no stray "-device foo".
  EXPECT_EQ(std::count(plan.argv.begin(), plan.argv.end(), "-device"), 3);
  EXPECT_EQ(value("-device", 0), "piix3-usb-uhci,id=usb,bus=pci.0,addr=0x1.0x2");
  EXPECT_EQ(value("-device", 1), "isa-serial,id=serial0,chardev=charserial0,index=0");
  EXPECT_EQ(value("-device", 2).rfind("virtio-balloon-pci,id=balloon0,bus=pci.0,addr=0x", 0), 0u) << value("-device", 2);

  // With JSON objects the path is a JSON string: nothing to escape, nothing to inject.
  plan = PlanLaunch(d, TwoNodeHost(), Caps72(), opts);
  EXPECT_NE(value("-object", 1).find(R"("mem-path":"/dev/hugepages/qlaunch/x,debug-threads=on -device foo")"),
            std::string::npos);

  // A machine type is the implied first value: a '=' in it would make QEMU read a key.
  for (const char* m : {"memory-backend=other", "pc,accel=kvm"}) {
    d.os.machine = m;
    EXPECT_THROW(PlanLaunch(d, TwoNodeHost(), Caps72(), opts), DiagnosticError) << m;
  }
}

TEST(PlanLaunch, DirectKernelDisksAndSerial) {
  auto d = MakeDomain();
  d.os.kernel = "/boot/vmlinuz";
  d.os.initrd = "/boot/initrd.img";
  d.os.cmdline = "console=ttyS0 root=/dev/vda,x";
  d.devices.disks.push_back(testing::DiskOf("file", "disk", "qcow2", "/var/lib/a,b.qcow2", "vda", "virtio", false, 50));
  d.devices.disks.push_back(testing::DiskOf("file", "cdrom", "raw", "/iso/x.iso", "hdc", "ide", true, 51));
  d.devices.chardevs.push_back(testing::CharDevOf("serial", "pty", "", "isa-serial", 52));
  d.devices.chardevs.push_back(testing::CharDevOf("console", "pty", "", "serial", 53));
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps72(), PlanOptions{});
  auto pos = std::find(plan.argv.begin(), plan.argv.end(), "-kernel");
  ASSERT_NE(pos, plan.argv.end());
  std::vector<std::string> tail(pos, plan.argv.end());
  std::vector<std::string> want = {
      "-kernel", "/boot/vmlinuz",
      "-initrd", "/boot/initrd.img",
      "-append", "console=ttyS0 root=/dev/vda,x",  // a plain argument: no escaping
      "-no-acpi",
      "-boot", "strict=on",
      "-device", "piix3-usb-uhci,id=usb,bus=pci.0,addr=0x1.0x2",
      // A JSON string: the comma is part of the file name, nothing to escape.
      "-blockdev", R"({"driver":"file","filename":"/var/lib/a,b.qcow2","node-name":"libvirt-2-storage",)"
                   R"("auto-read-only":true,"discard":"unmap"})",
      "-blockdev", R"({"node-name":"libvirt-2-format","read-only":false,"driver":"qcow2","file":"libvirt-2-storage"})",
      "-device", "virtio-blk-pci,id=virtio-disk0,drive=libvirt-2-format,bootindex=1,bus=pci.0,addr=0x2",  // libvirt: hd by default
      "-blockdev", R"({"driver":"file","filename":"/iso/x.iso","node-name":"libvirt-1-storage",)"
                   R"("auto-read-only":true,"discard":"unmap"})",
      "-blockdev", R"({"node-name":"libvirt-1-format","read-only":true,"driver":"raw","file":"libvirt-1-storage"})",
      "-device", "ide-cd,id=ide0-1-0,bus=ide.1,unit=0,drive=libvirt-1-format",
      "-chardev", "pty,id=charserial0",  // the <console> is the same port: one serial
      "-device", "isa-serial,id=serial0,chardev=charserial0,index=0",
      "-device", "virtio-balloon-pci,id=balloon0,bus=pci.0,addr=0x3",  // no <memballoon>: libvirt's default
      "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
  };
  EXPECT_EQ(tail, want);
}

TEST(PlanLaunch, SandboxIsLastAndOnlyWhenCompiledIn) {
  auto d = MakeDomain();
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps52(), PlanOptions{});
  ASSERT_GE(plan.argv.size(), 2u);
  EXPECT_EQ(plan.argv[plan.argv.size() - 2], "-sandbox");
  QemuCaps caps = Caps52();
  caps.sandbox = false;
  plan = PlanLaunch(d, TwoNodeHost(), caps, PlanOptions{});
  EXPECT_EQ(std::count(plan.argv.begin(), plan.argv.end(), "-sandbox"), 0);
  EXPECT_TRUE(std::any_of(plan.notes.begin(), plan.notes.end(),
                          [](const Diagnostic& n) { return n.message.find("sandbox") != std::string::npos; }));
}

TEST(PlanLaunch, NvdimmTurnsOnTheMachineOption) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0, 1}, GiB)});
  d.max_memory_bytes = 16 * GiB;
  d.max_memory_slots = 4;
  domain::MemoryDevice n;
  n.model = "nvdimm";
  n.size_bytes = 512 << 20;
  n.node = 0;
  n.source_path = "/tmp/nvdimm";
  d.devices.memory.push_back(n);
  LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps72(), PlanOptions{});
  auto m = std::find(plan.argv.begin(), plan.argv.end(), "-machine");
  EXPECT_EQ(*(m + 1), "pc,nvdimm=on,dump-guest-core=off");
  auto args = MemoryArgs(plan.argv);
  EXPECT_EQ(args.back(), "-device nvdimm,node=0,memdev=memnvdimm0,id=nvdimm0,slot=0");
}

TEST(PlanLaunch, ErrorsNameTheElement) {
  auto d = TwoCells();
  AddMemnode(d, 1, NumaMode::kStrict, IdSet{7});
  try {
    PlanLaunch(d, TwoNodeHost(), Caps72(), PlanOptions{});
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostics().at(0).ToString().find("vm1.xml:13"), 0u) << e.diagnostics().at(0).ToString();
    EXPECT_NE(std::string(e.what()).find("NUMA node 7 is unavailable"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace qlaunch::qemu

namespace qlaunch::qemu {
namespace {

// Lifecycle actions as libvirt 9.0 renders them: -no-reboot for on_reboot='destroy';
// -no-shutdown when QEMU must stay after a poweroff or panic (preserve, or `qlaunch run`, which
// decides itself); the pvpanic device for <panic model='isa'>; the supervisor's second monitor.
TEST(PlanLaunch, LifecycleTable) {
  struct Case {
    const char* name;
    std::string poweroff, reboot, crash;
    bool supervised, panic;
    bool no_reboot, no_shutdown;
  } cases[] = {
      {"defaults", "destroy", "restart", "destroy", false, false, false, false},
      {"on_reboot destroy", "destroy", "destroy", "destroy", false, false, true, false},
      {"on_poweroff preserve", "preserve", "restart", "destroy", false, false, false, true},
      {"on_crash preserve with pvpanic", "destroy", "restart", "preserve", false, true, false, true},
      {"supervised", "destroy", "restart", "destroy", true, true, false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto d = MakeDomain();
    d.lifecycle.on_poweroff = c.poweroff;
    d.lifecycle.on_reboot = c.reboot;
    d.lifecycle.on_crash = c.crash;
    d.devices.panic = c.panic;
    PlanOptions opts;
    opts.supervised = c.supervised;
    opts.qmp_fd = 7;
    if (c.supervised) opts.events_fd = 8;
    LaunchPlan plan = PlanLaunch(d, TwoNodeHost(), Caps72(), opts);
    auto has = [&](const std::string& a) { return std::find(plan.argv.begin(), plan.argv.end(), a) != plan.argv.end(); };
    EXPECT_EQ(has("-no-reboot"), c.no_reboot);
    EXPECT_EQ(has("-no-shutdown"), c.no_shutdown);
    EXPECT_EQ(has("pvpanic"), c.panic);
    EXPECT_TRUE(has("socket,id=qmp,fd=7,server=on,wait=off"));
    EXPECT_EQ(has("socket,id=qmp-events,fd=8,server=on,wait=off"), c.supervised);
  }
}

// The destination of a migration: `-incoming defer` just before -sandbox, and no -S (the run
// state comes with the stream); everything else as for a start, so both ends plan the same machine.
TEST(PlanLaunch, AnIncomingPlanDefersAndDropsTheStartPause) {
  auto d = MakeDomain();
  PlanOptions start_opts;
  start_opts.qmp_fd = 7;
  PlanOptions incoming_opts = start_opts;
  incoming_opts.incoming = true;
  const LaunchPlan start = PlanLaunch(d, TwoNodeHost(), Caps72(), start_opts);
  const LaunchPlan incoming = PlanLaunch(d, TwoNodeHost(), Caps72(), incoming_opts);
  std::vector<std::string> expected = start.argv;
  expected.erase(std::find(expected.begin(), expected.end(), "-S"));
  const auto sandbox = std::find(expected.begin(), expected.end(), "-sandbox");
  ASSERT_NE(sandbox, expected.end());
  expected.insert(expected.insert(sandbox, "defer"), "-incoming");
  EXPECT_EQ(incoming.argv, expected);
}

}  // namespace
}  // namespace qlaunch::qemu
