#include "prealloc/worker_plan.h"

#include <algorithm>
#include <numeric>

namespace qlaunch::prealloc {

IdSet WorkerCpus(const numa::HostTopology& topo, const IdSet& host_nodes) {
  IdSet cpu_nodes;
  for (unsigned node : host_nodes) cpu_nodes = cpu_nodes.Union(topo.NearestCpuNodes(node));
  IdSet cpus = topo.CpusOfNodes(cpu_nodes).Intersect(topo.usable_cpus);
  return cpus.Empty() ? topo.usable_cpus : cpus;
}

std::vector<unsigned> DistributeThreads(std::span<const unsigned> wanted, unsigned budget) {
  std::vector<unsigned> out(wanted.size());
  std::transform(wanted.begin(), wanted.end(), out.begin(), [](unsigned w) { return std::max(w, 1u); });
  const uint64_t total = std::accumulate(out.begin(), out.end(), uint64_t{0});
  if (budget == 0 || total <= budget) return out;
  if (out.size() >= budget) return std::vector<unsigned>(out.size(), 1);

  // Everyone keeps one thread; the rest of the budget goes proportionally to what each wanted
  // beyond one, largest remainders first (ties to the earlier region).
  const uint64_t spare = budget - out.size();
  const uint64_t extra_total = total - out.size();
  std::vector<uint64_t> remainder(out.size());
  uint64_t given = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t extra = out[i] - 1;
    uint64_t share = extra * spare / extra_total;
    remainder[i] = extra * spare % extra_total;
    out[i] = 1 + static_cast<unsigned>(share);
    given += share;
  }
  std::vector<size_t> order(out.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return remainder[a] > remainder[b]; });
  for (size_t k = 0; given < spare; ++k, ++given) ++out[order[k]];
  return out;
}

}  // namespace qlaunch::prealloc
