#include "qemu_cmd/thread_context_plan.h"

#include <gtest/gtest.h>

#include "tests/support/plan_fixtures.h"

namespace qlaunch::qemu {
namespace {

using namespace qlaunch::testing;

MemoryBackend Backend(std::string id, IdSet host_nodes, BackendType type = BackendType::kFile, bool shared = false,
                      PreallocBy prealloc = PreallocBy::kQemu) {
  MemoryBackend b;
  b.id = std::move(id);
  b.type = type;
  b.shared = shared;
  b.host_nodes = std::move(host_nodes);
  b.policy = b.host_nodes.Empty() ? "" : "bind";
  b.prealloc = prealloc;
  b.size_bytes = 1ull << 30;
  b.page_size_bytes = kPage2M;
  return b;
}

TEST(PreallocNodes, CpuNodesStayAndCpulessNodesGoToTheirNearest) {
  struct Case {
    const char* name;
    numa::HostTopology host;
    IdSet host_nodes;
    IdSet want;
  };
  const Case cases[] = {
      {"two-node, node 1", TwoNodeHost(), IdSet{1}, IdSet{1}},
      {"two-node, both", TwoNodeHost(), IdSet{0, 1}, IdSet{0, 1}},
      {"cpuless 2 -> nearest 0", FourNodeCpulessHost(), IdSet{2}, IdSet{0}},
      {"cpuless 3 -> tie 0 and 1", FourNodeCpulessHost(), IdSet{3}, IdSet{0, 1}},
      {"1 and cpuless 3", FourNodeCpulessHost(), IdSet{1, 3}, IdSet{0, 1}},
      {"0 and cpuless 2", FourNodeCpulessHost(), IdSet{0, 2}, IdSet{0}},
      {"all four", FourNodeCpulessHost(), IdSet{0, 1, 2, 3}, IdSet{0, 1}},
      {"sparse: cpuless 5 -> 2", SparseIdsHost(), IdSet{5}, IdSet{2}},
      {"sparse: 0 and 5", SparseIdsHost(), IdSet{0, 5}, IdSet{0, 2}},
      {"unbound: all usable", FourNodeCpulessHost(), IdSet{}, IdSet{0, 1}},
      {"sparse unbound", SparseIdsHost(), IdSet{}, IdSet{0, 2}},
  };
  auto d = MakeDomain();
  for (const Case& c : cases) {
    EXPECT_EQ(PreallocNodes(Backend("b", c.host_nodes), d, c.host), c.want) << c.name;
  }
}

TEST(PreallocNodes, EmulatorpinNarrowsUnboundBackendsOnly) {
  auto d = MakeDomain();
  const auto host = TwoNodeHost();
  d.cputune.emulatorpin = IdSet{1};
  EXPECT_EQ(PreallocNodes(Backend("b", {}), d, host), IdSet{0});
  d.cputune.emulatorpin = IdSet{4, 5};
  EXPECT_EQ(PreallocNodes(Backend("b", {}), d, host), IdSet{1});
  d.cputune.emulatorpin = IdSet{3, 4};
  EXPECT_EQ(PreallocNodes(Backend("b", {}), d, host), (IdSet{0, 1}));
  // A backend bound to host nodes follows its memory, not the emulator pinning.
  d.cputune.emulatorpin = IdSet{4};
  EXPECT_EQ(PreallocNodes(Backend("b", IdSet{0}), d, host), IdSet{0});
}

TEST(PreallocNodes, OnlyNodesWithUsableCpus) {
  auto host = TwoNodeHost();
  host.usable_cpus = IdSet{0, 1};
  auto d = MakeDomain();
  EXPECT_TRUE(PreallocNodes(Backend("b", IdSet{1}), d, host).Empty());
  EXPECT_EQ(PreallocNodes(Backend("b", IdSet{0, 1}), d, host), IdSet{0});
  EXPECT_EQ(PreallocNodes(Backend("b", {}), d, host), IdSet{0});
}

TEST(DefaultPreallocThreads, OnePerCpuAtLeastOneAndAtMostTheCap) {
  EXPECT_EQ(DefaultPreallocThreads(IdSet{}), 1u);
  EXPECT_EQ(DefaultPreallocThreads(IdSet{5}), 1u);
  EXPECT_EQ(DefaultPreallocThreads(IdSet{0, 1, 2, 3}), 4u);
  IdSet many;
  for (unsigned i = 0; i < 40; ++i) many.Insert(i);
  EXPECT_EQ(DefaultPreallocThreads(many), 40u);  // no cap: qlaunch's own preallocator
  EXPECT_EQ(DefaultPreallocThreads(many, 16), 16u);
  EXPECT_EQ(DefaultPreallocThreads(many, 32), 32u);
}

qemu::QemuCaps CapsVersion(qemu::QemuCaps caps, int major, int minor) {
  caps.major = major;
  caps.minor = minor;
  return caps;
}

TEST(QemuPreallocThreadCap, SixteenThenThirtyTwoFromEleven) {
  EXPECT_EQ(QemuPreallocThreadCap(Caps52()), 16u);
  EXPECT_EQ(QemuPreallocThreadCap(Caps72()), 16u);
  EXPECT_EQ(QemuPreallocThreadCap(CapsVersion(Caps72(), 10, 2)), 16u);
  EXPECT_EQ(QemuPreallocThreadCap(CapsVersion(Caps72(), 11, 0)), 32u);
}

// The decision table of docs/planner.md, row by row.
TEST(ChoosePreallocator, DecisionTable) {
  using P = PreallocBy;
  IdSet cpus4{0, 1, 2, 3}, cpus40;
  for (unsigned i = 0; i < 40; ++i) cpus40.Insert(i);
  MemoryBackend memfd2m = Backend("m", IdSet{0}, BackendType::kMemfd, true);
  MemoryBackend memfd4k = memfd2m;
  memfd4k.page_size_bytes = 0;
  MemoryBackend private2m = Backend("p", IdSet{0}, BackendType::kMemfd, false);
  MemoryBackend file2m = Backend("f", IdSet{0}, BackendType::kFile, true);
  struct Case {
    const char* name;
    const MemoryBackend& b;
    QemuCaps caps;
    PreallocMode mode;
    const IdSet& cpus;
    P want;
    const char* reason_has;
  };
  const Case cases[] = {
      {"shared 2M memfd, auto, 7.2", memfd2m, Caps72(), PreallocMode::kAuto, cpus4, P::kLauncher, "one after the other"},
      {"shared 2M memfd, auto, 5.2", memfd2m, Caps52(), PreallocMode::kAuto, cpus4, P::kLauncher, "no thread-context"},
      {"shared 2M memfd, auto, 9.0, 4 CPUs", memfd2m, CapsVersion(Caps72(), 9, 0), PreallocMode::kAuto, cpus4, P::kQemu,
       "in parallel"},
      {"shared 2M memfd, auto, 9.0, 40 CPUs", memfd2m, CapsVersion(Caps72(), 9, 0), PreallocMode::kAuto, cpus40,
       P::kLauncher, "at most 16 of the 40"},
      {"shared 2M memfd, auto, 11.0, 40 CPUs", memfd2m, CapsVersion(Caps72(), 11, 0), PreallocMode::kAuto, cpus40,
       P::kLauncher, "at most 32 of the 40"},
      {"shared 4K memfd, auto, 7.2", memfd4k, Caps72(), PreallocMode::kAuto, cpus4, P::kQemu, "4 KiB"},
      {"shared 4K memfd, auto, 5.2", memfd4k, Caps52(), PreallocMode::kAuto, cpus4, P::kLauncher, "no thread-context"},
      {"private memfd, auto", private2m, Caps52(), PreallocMode::kAuto, cpus4, P::kQemu, "private memfd"},
      {"hugetlbfs file, launcher", file2m, Caps72(), PreallocMode::kLauncher, cpus4, P::kQemu, "file backend"},
      {"shared memfd, launcher", memfd4k, Caps72(), PreallocMode::kLauncher, cpus4, P::kLauncher, "--prealloc launcher"},
      {"shared memfd, qemu", memfd2m, Caps52(), PreallocMode::kQemu, cpus4, P::kQemu, "--prealloc qemu"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PreallocChoice got = ChoosePreallocator(c.b, c.caps, c.mode, c.cpus);
    EXPECT_EQ(got.by, c.want);
    EXPECT_NE(got.reason.find(c.reason_has), std::string::npos) << got.reason;
  }
}

TEST(PlanPrealloc, LauncherThreadsAreNotCappedQemuThreadsAre) {
  IdSet cpus;
  for (unsigned i = 0; i < 40; ++i) cpus.Insert(i);
  auto host = MakeHost({{0, cpus}}, {{10}}, {{kPage2M, "/dev/hugepages"}}, kPage2M, {kPage2M});
  auto d = MakeDomain();
  std::vector<MemoryBackend> bs = {Backend("ram-node0", IdSet{0}, BackendType::kMemfd, true),
                                   Backend("ram-node1", IdSet{0}, BackendType::kMemfd, false)};
  std::vector<Diagnostic> notes;
  PlanPrealloc(bs, d, host, Caps72(), {}, &notes);
  EXPECT_EQ(bs[0].prealloc, PreallocBy::kLauncher);
  EXPECT_EQ(bs[0].launcher_threads, 40u);
  EXPECT_EQ(bs[1].prealloc, PreallocBy::kQemu);
  EXPECT_EQ(bs[1].prealloc_threads, 16u);
  EXPECT_FALSE(bs[0].prealloc_reason.empty());
  EXPECT_FALSE(bs[1].prealloc_reason.empty());
}

TEST(PlanPrealloc, ContextsAreSharedByEqualCpuSets) {
  auto d = MakeDomain();
  auto host = FourNodeCpulessHost();
  std::vector<MemoryBackend> bs = {
      Backend("ram-node0", IdSet{0}),      // {0}
      Backend("ram-node1", IdSet{2}),      // cpuless 2 -> {0}: shares with ram-node0
      Backend("ram-node2", IdSet{1}),      // {1}
      Backend("ram-node3", IdSet{3}),      // tie -> {0,1}
      Backend("pc.ram", IdSet{}),          // unbound -> {0,1}: shares with ram-node3
      Backend("memdimm0", IdSet{0}, BackendType::kRam, false, PreallocBy::kNone),  // not preallocated
  };
  std::vector<Diagnostic> notes;
  auto ctx = PlanPrealloc(bs, d, host, Caps72(), PlanOptions{}, &notes);
  ASSERT_EQ(ctx.size(), 3u);
  EXPECT_EQ(ctx[0].id, "tc-ram-node0");
  EXPECT_EQ(ctx[0].node_affinity, IdSet{0});
  EXPECT_EQ(ctx[0].cpus, (IdSet{0, 1, 2, 3}));
  EXPECT_EQ(ctx[1].id, "tc-ram-node2");
  EXPECT_EQ(ctx[1].node_affinity, IdSet{1});
  EXPECT_EQ(ctx[1].cpus, (IdSet{4, 5, 6, 7}));
  EXPECT_EQ(ctx[2].id, "tc-ram-node3");
  EXPECT_EQ(ctx[2].node_affinity, (IdSet{0, 1}));
  EXPECT_EQ(ctx[2].cpus, (IdSet{0, 1, 2, 3, 4, 5, 6, 7}));

  std::vector<std::string> tcs;
  std::vector<unsigned> threads;
  for (const auto& b : bs) {
    tcs.push_back(b.thread_context);
    threads.push_back(b.prealloc_threads);
  }
  EXPECT_EQ(tcs, (std::vector<std::string>{"tc-ram-node0", "tc-ram-node0", "tc-ram-node2", "tc-ram-node3",
                                            "tc-ram-node3", ""}));
  EXPECT_EQ(threads, (std::vector<unsigned>{4, 4, 4, 8, 8, 0}));
  EXPECT_EQ(bs[5].prealloc, PreallocBy::kNone);
  EXPECT_TRUE(bs[5].prealloc_cpus.Empty());
  EXPECT_EQ(bs[1].prealloc_cpus, (IdSet{0, 1, 2, 3}));
  EXPECT_TRUE(notes.empty());
}

TEST(PlanPrealloc, DomainThreadsWinOverSizing) {
  auto d = MakeDomain();
  d.memory_backing.threads = 3;
  std::vector<MemoryBackend> bs = {Backend("ram-node0", IdSet{0}), Backend("ram-node1", {})};
  std::vector<Diagnostic> notes;
  PlanPrealloc(bs, d, TwoNodeHost(), Caps72(), {}, &notes);
  EXPECT_EQ(bs[0].prealloc_threads, 3u);
  EXPECT_EQ(bs[1].prealloc_threads, 3u);
}

TEST(PlanPrealloc, NoContextsOnOldQemuButThreadsStillSized) {
  auto d = MakeDomain();
  std::vector<MemoryBackend> bs = {Backend("ram-node0", IdSet{0}), Backend("ram-node1", IdSet{}),
                                   Backend("ram-node2", IdSet{3})};
  std::vector<Diagnostic> notes;
  auto ctx = PlanPrealloc(bs, d, FourNodeCpulessHost(), Caps52(), {}, &notes);
  EXPECT_TRUE(ctx.empty());
  for (const auto& b : bs) {
    EXPECT_EQ(b.prealloc, PreallocBy::kQemu);
    EXPECT_EQ(b.thread_context, "");
  }
  EXPECT_EQ(bs[0].prealloc_threads, 4u);  // CPUs of node 0
  EXPECT_EQ(bs[1].prealloc_threads, 8u);  // all usable CPUs
  EXPECT_EQ(bs[2].prealloc_threads, 8u);  // cpuless 3 -> nodes 0 and 1

  QemuCaps no_threads = Caps52();
  no_threads.prealloc_threads = false;
  PlanPrealloc(bs = {Backend("ram-node0", IdSet{0})}, d, TwoNodeHost(), no_threads, {}, &notes);
  EXPECT_EQ(bs[0].prealloc_threads, 0u);
}

TEST(PlanPrealloc, ContextNeedsBothCaps) {
  auto d = MakeDomain();
  QemuCaps caps = Caps72();
  caps.prealloc_context = false;
  std::vector<MemoryBackend> bs = {Backend("ram-node0", IdSet{0})};
  std::vector<Diagnostic> notes;
  EXPECT_TRUE(PlanPrealloc(bs, d, TwoNodeHost(), caps, {}, &notes).empty());
  EXPECT_EQ(bs[0].thread_context, "");
}

TEST(PlanPrealloc, NoUsableCpuNearTheMemoryMeansNoContext) {
  auto d = MakeDomain();
  auto host = TwoNodeHost();
  host.usable_cpus = IdSet{0, 1};
  std::vector<MemoryBackend> bs = {Backend("ram-node0", IdSet{1})};
  std::vector<Diagnostic> notes;
  EXPECT_TRUE(PlanPrealloc(bs, d, host, Caps72(), {}, &notes).empty());
  EXPECT_EQ(bs[0].thread_context, "");
  EXPECT_EQ(bs[0].prealloc, PreallocBy::kQemu);
  EXPECT_EQ(bs[0].prealloc_threads, 2u);  // the usable CPUs
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].message.find("ram-node0"), std::string::npos);
}

struct WhoCase {
  const char* name;
  PreallocMode mode;
  bool new_qemu;
  // For: shared memfd, private memfd, shared hugetlb file, shared memfd not preallocated.
  PreallocBy want[4];
};

TEST(PlanPrealloc, WhoPreallocates) {
  using P = PreallocBy;
  const WhoCase cases[] = {
      {"auto on 7.2", PreallocMode::kAuto, true, {P::kLauncher, P::kQemu, P::kQemu, P::kNone}},
      {"auto on 5.2", PreallocMode::kAuto, false, {P::kLauncher, P::kQemu, P::kQemu, P::kNone}},
      {"launcher on 7.2", PreallocMode::kLauncher, true, {P::kLauncher, P::kQemu, P::kQemu, P::kNone}},
      {"launcher on 5.2", PreallocMode::kLauncher, false, {P::kLauncher, P::kQemu, P::kQemu, P::kNone}},
      {"qemu on 7.2", PreallocMode::kQemu, true, {P::kQemu, P::kQemu, P::kQemu, P::kNone}},
      {"qemu on 5.2", PreallocMode::kQemu, false, {P::kQemu, P::kQemu, P::kQemu, P::kNone}},
  };
  auto d = MakeDomain();
  for (const WhoCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<MemoryBackend> bs = {
        Backend("ram-node0", IdSet{0}, BackendType::kMemfd, true),
        Backend("ram-node1", IdSet{1}, BackendType::kMemfd, false),
        Backend("ram-node2", IdSet{1}, BackendType::kFile, true),
        Backend("ram-node3", IdSet{1}, BackendType::kMemfd, true, PreallocBy::kNone),
    };
    PlanOptions opts;
    opts.prealloc = c.mode;
    std::vector<Diagnostic> notes;
    auto ctx = PlanPrealloc(bs, d, TwoNodeHost(), c.new_qemu ? Caps72() : Caps52(), opts, &notes);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(bs[i].prealloc, c.want[i]) << bs[i].id;
    for (const auto& b : bs) {
      // Contexts only for backends QEMU preallocates, and only on a QEMU that has them.
      EXPECT_EQ(!b.thread_context.empty(), b.prealloc == P::kQemu && c.new_qemu) << b.id;
      if (b.prealloc == P::kLauncher) {
        EXPECT_EQ(b.launcher_fd, 3);
        EXPECT_EQ(b.mem_path, "/proc/self/fd/3");
        EXPECT_EQ(b.prealloc_threads, 0u);
        EXPECT_EQ(b.launcher_threads, 4u);
        EXPECT_EQ(b.prealloc_cpus, (IdSet{0, 1, 2, 3}));
      } else {
        EXPECT_EQ(b.launcher_fd, -1);
        EXPECT_EQ(b.launcher_threads, 0u);
      }
    }
  }
}

TEST(PlanPrealloc, LauncherFdsAreNumberedInOrder) {
  auto d = MakeDomain();
  std::vector<MemoryBackend> bs = {
      Backend("ram-node0", IdSet{0}, BackendType::kMemfd, true),
      Backend("ram-node1", IdSet{1}, BackendType::kMemfd, false),
      Backend("ram-node2", IdSet{1}, BackendType::kMemfd, true),
  };
  PlanOptions opts;
  opts.first_launcher_fd = 10;
  std::vector<Diagnostic> notes;
  PlanPrealloc(bs, d, TwoNodeHost(), Caps52(), opts, &notes);
  EXPECT_EQ(bs[0].launcher_fd, 10);
  EXPECT_EQ(bs[0].mem_path, "/proc/self/fd/10");
  EXPECT_EQ(bs[1].launcher_fd, -1);
  EXPECT_EQ(bs[2].launcher_fd, 11);
  EXPECT_EQ(bs[2].mem_path, "/proc/self/fd/11");
  EXPECT_EQ(bs[2].prealloc_cpus, (IdSet{4, 5, 6, 7}));
}

}  // namespace
}  // namespace qlaunch::qemu
