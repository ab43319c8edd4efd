#include "qemu_cmd/thread_context_plan.h"

#include "qemu_cmd/plan_diagnostic.h"

#include <algorithm>
#include <map>
#include <string>

namespace qlaunch::qemu {

IdSet UsableCpus(const numa::HostTopology& host) {
  return host.usable_cpus.Empty() ? host.CpusOfNodes(host.NodeIds()) : host.usable_cpus;
}

IdSet PreallocNodes(const MemoryBackend& b, const domain::DomainDef& def, const numa::HostTopology& host) {
  const IdSet usable = UsableCpus(host);
  IdSet nodes;
  if (!b.host_nodes.Empty()) {
    for (unsigned n : b.host_nodes) nodes = nodes.Union(host.NearestCpuNodes(n));
  } else {
    IdSet cpus = usable;
    if (def.cputune.emulatorpin) cpus = cpus.Intersect(*def.cputune.emulatorpin);
    nodes = host.NodesOfCpus(cpus);
  }
  return nodes.Intersect(host.NodesOfCpus(usable));
}

unsigned DefaultPreallocThreads(const IdSet& cpus) {
  // One thread per CPU the threads may run on: preallocation is bound by page-fault and
  // memory-clearing throughput, which scales with cores until memory bandwidth runs out;
  // QEMU itself never starts more than 16.
  return static_cast<unsigned>(std::clamp<size_t>(cpus.Size(), 1, kMaxPreallocThreads));
}

namespace {

bool ByLauncher(const MemoryBackend& b, const QemuCaps& caps, PreallocMode mode) {
  bool candidate = b.type == BackendType::kMemfd && b.shared;
  switch (mode) {
    case PreallocMode::kAuto: return candidate && !caps.thread_context;
    case PreallocMode::kLauncher: return candidate;
    case PreallocMode::kQemu: return false;
  }
  return false;
}

}  // namespace

std::vector<ThreadContext> PlanPrealloc(std::vector<MemoryBackend>& backends, const domain::DomainDef& def,
                                        const numa::HostTopology& host, const QemuCaps& caps,
                                        const PlanOptions& opts, std::vector<Diagnostic>* notes) {
  const IdSet usable = UsableCpus(host);
  const bool contexts_ok = caps.thread_context && caps.prealloc_context;
  const unsigned user_threads = def.memory_backing.threads.value_or(0);  // 0: not given (QEMU rejects 0)
  std::vector<ThreadContext> contexts;
  std::map<IdSet, size_t> context_of_cpus;
  int next_fd = opts.first_launcher_fd;

  for (MemoryBackend& b : backends) {
    if (b.prealloc == PreallocBy::kNone) continue;
    const IdSet nodes = PreallocNodes(b, def, host);
    const IdSet cpus = host.CpusOfNodes(nodes).Intersect(usable);

    if (ByLauncher(b, caps, opts.prealloc)) {
      b.prealloc = PreallocBy::kLauncher;
      b.launcher_fd = next_fd++;
      b.mem_path = "/proc/self/fd/" + std::to_string(b.launcher_fd);
      b.prealloc_cpus = cpus.Empty() ? usable : cpus;
      b.launcher_threads = user_threads ? user_threads : DefaultPreallocThreads(b.prealloc_cpus);
      continue;
    }

    b.prealloc = PreallocBy::kQemu;
    if (contexts_ok && cpus.Empty()) {
      notes->push_back(PlanWarning(def, 0, "", "no usable CPU is near the host nodes of memory backend " + b.id +
                                        "; QEMU preallocates it without a thread-context"));
    } else if (contexts_ok) {
      auto [it, fresh] = context_of_cpus.try_emplace(cpus, contexts.size());
      if (fresh) contexts.push_back({"tc-" + b.id, nodes, cpus});
      b.thread_context = contexts[it->second].id;
    }
    // Without a context QEMU's threads inherit the emulator's affinity; the best sizing we
    // have is still the CPUs near the backend's memory.
    b.prealloc_cpus = cpus.Empty() ? usable : cpus;
    if (caps.prealloc_threads)
      b.prealloc_threads = user_threads ? user_threads : DefaultPreallocThreads(b.prealloc_cpus);
  }
  return contexts;
}

}  // namespace qlaunch::qemu
