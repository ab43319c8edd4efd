// Planner speed: qemu::PlanLaunch (memory backends, thread-contexts, argv rendering) on a large
// host and a large domain, built in code. Not a test: run by scripts/bench, which puts the
// result in docs/benchmarks.md. Built only when Google Benchmark is installed.
//
// Host: 64 NUMA nodes in 8 sockets of 8 nodes; nodes 0-47 have 4 CPUs each, nodes 48-63 are
// CPU-less memory nodes (two per socket). Distances: 10 local, 16 same socket, 32 other socket.
// Domain: 128 guest cells and 128 pc-dimms = 256 memory backends, all 2 MiB hugepages on shared
// memfds, preallocated; cell i is bound (strict) to host node i % 64 and DIMM j to host node
// (7j + 3) % 64, so some backends need the nearest-CPU-node fallback and many share a context.
#include <benchmark/benchmark.h>

#include <string>
#include <utility>
#include <vector>

#include "qemu_cmd/planner.h"
#include "support/plan_fixtures.h"

namespace {

using namespace qlaunch;
using qlaunch::testing::kPage2M;

constexpr unsigned kHostNodes = 64;
constexpr unsigned kNodesPerSocket = 8;
constexpr unsigned kCpuNodes = 48;
constexpr unsigned kCpusPerNode = 4;
constexpr unsigned kCells = 128;
constexpr unsigned kDimms = 128;

numa::HostTopology LargeHost() {
  // CPU nodes first in each socket (6 of 8), then 2 memory-only nodes; ids 48-63 are CPU-less.
  std::vector<std::pair<unsigned, IdSet>> nodes;
  unsigned next_cpu = 0;
  for (unsigned id = 0; id < kHostNodes; ++id) {
    IdSet cpus;
    if (id < kCpuNodes)
      for (unsigned c = 0; c < kCpusPerNode; ++c) cpus.Insert(next_cpu++);
    nodes.emplace_back(id, std::move(cpus));
  }
  auto socket_of = [](unsigned id) {
    return id < kCpuNodes ? id / 6 : (id - kCpuNodes) / 2;  // 6 CPU nodes + 2 memory nodes per socket
  };
  std::vector<std::vector<unsigned>> dist(kHostNodes, std::vector<unsigned>(kHostNodes));
  for (unsigned i = 0; i < kHostNodes; ++i)
    for (unsigned j = 0; j < kHostNodes; ++j)
      dist[i][j] = i == j ? 10 : socket_of(i) == socket_of(j) ? 16 : 32;
  static_assert(kHostNodes / kNodesPerSocket == 8);
  return qlaunch::testing::MakeHost(nodes, dist, {{kPage2M, "/dev/hugepages"}}, kPage2M, {kPage2M});
}

domain::DomainDef LargeDomain() {
  using namespace qlaunch::testing;
  domain::DomainDef d = MakeDomain("bench-large");
  std::vector<domain::NumaCell> cells;
  for (unsigned i = 0; i < kCells; ++i) cells.push_back(Cell(i, IdSet{2 * i, 2 * i + 1}, 1ull << 30));
  SetCells(d, std::move(cells));
  d.cpu.mode = "custom";
  d.cpu.model = "qemu64";
  d.cpu.topology = domain::CpuTopology{};
  d.cpu.topology->sockets = kCells;
  d.cpu.topology->cores = 2;
  SetHugepages(d, {Page(kPage2M)});
  d.memory_backing.source = domain::MemSource::kMemfd;
  d.memory_backing.access = domain::MemAccess::kShared;
  d.memory_backing.allocation = domain::AllocMode::kImmediate;
  for (unsigned i = 0; i < kCells; ++i) AddMemnode(d, i, domain::NumaMode::kStrict, IdSet{i % kHostNodes});
  uint64_t dimm_bytes = 0;
  for (unsigned j = 0; j < kDimms; ++j) {
    domain::MemoryDevice m;
    m.model = "dimm";
    m.size_bytes = 1ull << 30;
    m.node = j % kCells;
    m.source_nodemask = IdSet{(7 * j + 3) % kHostNodes};
    m.source_pagesize_bytes = kPage2M;
    m.line = 100 + static_cast<int>(j);
    d.devices.memory.push_back(std::move(m));
    dimm_bytes += 1ull << 30;
  }
  d.max_memory_bytes = d.memory_bytes + dimm_bytes + (64ull << 30);
  d.max_memory_slots = kDimms;
  d.max_memory_line = 4;
  d.memory_bytes += dimm_bytes;  // <memory> counts the DIMMs too
  return d;
}

void BM_PlanRender_64Nodes_256Backends(benchmark::State& state) {
  const numa::HostTopology host = LargeHost();
  const domain::DomainDef def = LargeDomain();
  const qemu::QemuCaps caps = qlaunch::testing::Caps72();
  qemu::PlanOptions opts;
  opts.qmp_socket = "/run/qlaunch/bench-large/qmp.sock";
  opts.memory_backing_dir = "/run/qlaunch/bench-large/ram";

  const qemu::LaunchPlan check = qemu::PlanLaunch(def, host, caps, opts);
  if (check.backends.size() != kCells + kDimms) {
    state.SkipWithError(("expected 256 backends, planned " + std::to_string(check.backends.size())).c_str());
    return;
  }
  for (auto _ : state) {
    qemu::LaunchPlan plan = qemu::PlanLaunch(def, host, caps, opts);
    benchmark::DoNotOptimize(plan.argv.data());
    benchmark::ClobberMemory();
  }
  state.counters["backends"] = static_cast<double>(check.backends.size());
  state.counters["contexts"] = static_cast<double>(check.contexts.size());
  state.counters["argv"] = static_cast<double>(check.argv.size());
  state.counters["backends_per_s"] =
      benchmark::Counter(static_cast<double>(check.backends.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PlanRender_64Nodes_256Backends)->Unit(benchmark::kMicrosecond);

// For scale: the shipped two-cell shape on a two-node host.
void BM_PlanRender_2Nodes_2Backends(benchmark::State& state) {
  using namespace qlaunch::testing;
  const numa::HostTopology host = TwoNodeHost();
  domain::DomainDef def = MakeDomain("bench-small");
  SetCells(def, {Cell(0, IdSet{0}, 1ull << 30), Cell(1, IdSet{1}, 1ull << 30)});
  SetHugepages(def, {Page(kPage2M)});
  def.memory_backing.source = domain::MemSource::kMemfd;
  def.memory_backing.access = domain::MemAccess::kShared;
  AddMemnode(def, 0, domain::NumaMode::kStrict, IdSet{0});
  AddMemnode(def, 1, domain::NumaMode::kStrict, IdSet{1});
  const qemu::QemuCaps caps = Caps72();
  qemu::PlanOptions opts;
  opts.qmp_socket = "/run/qlaunch/bench-small/qmp.sock";
  for (auto _ : state) {
    qemu::LaunchPlan plan = qemu::PlanLaunch(def, host, caps, opts);
    benchmark::DoNotOptimize(plan.argv.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_PlanRender_2Nodes_2Backends)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
