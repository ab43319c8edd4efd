// The query helpers of HostTopology (pure functions of the data read).
#include "numa/host_topology.h"

#include <algorithm>
#include <limits>

namespace qlaunch::numa {

namespace {

constexpr unsigned kLocalDistance = 10;
constexpr unsigned kRemoteDistance = 20;  // the kernel's default when the firmware gives none

}  // namespace

const HostNode* HostTopology::Node(unsigned id) const {
  auto it = std::lower_bound(nodes.begin(), nodes.end(), id,
                             [](const HostNode& n, unsigned want) { return n.id < want; });
  return it != nodes.end() && it->id == id ? &*it : nullptr;
}

IdSet HostTopology::NodeIds() const {
  IdSet ids;
  for (const HostNode& n : nodes) ids.Insert(n.id);
  return ids;
}

IdSet HostTopology::CpuNodeIds() const {
  IdSet ids;
  for (const HostNode& n : nodes)
    if (n.HasCpus()) ids.Insert(n.id);
  return ids;
}

std::optional<unsigned> HostTopology::NodeOfCpu(unsigned cpu) const {
  for (const HostNode& n : nodes)
    if (n.cpus.Contains(cpu)) return n.id;
  return std::nullopt;
}

IdSet HostTopology::NodesOfCpus(const IdSet& cpus) const {
  IdSet ids;
  for (const HostNode& n : nodes)
    if (n.cpus.Intersects(cpus)) ids.Insert(n.id);
  return ids;
}

IdSet HostTopology::CpusOfNodes(const IdSet& ids) const {
  IdSet cpus;
  for (const HostNode& n : nodes)
    if (ids.Contains(n.id)) cpus = cpus.Union(n.cpus);
  return cpus;
}

unsigned HostTopology::Distance(unsigned from, unsigned to) const {
  if (const HostNode* n = Node(from)) {
    auto it = n->distances.find(to);
    if (it != n->distances.end()) return it->second;
  }
  return from == to ? kLocalDistance : kRemoteDistance;
}

IdSet HostTopology::NearestCpuNodes(unsigned node) const {
  const HostNode* n = Node(node);
  if (n == nullptr) return {};
  if (n->HasCpus()) return IdSet{node};
  const IdSet candidates = CpuNodeIds();
  if (n->distances.empty()) return candidates;
  unsigned best = std::numeric_limits<unsigned>::max();
  IdSet nearest;
  for (unsigned c : candidates) {
    unsigned d = Distance(node, c);
    if (d < best) {
      best = d;
      nearest = IdSet{c};
    } else if (d == best) {
      nearest.Insert(c);
    }
  }
  return nearest;
}

}  // namespace qlaunch::numa
