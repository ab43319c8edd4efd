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

unsigned QemuPreallocThreadCap(const QemuCaps& caps) { return caps.VersionAtLeast(11, 0) ? 32 : 16; }

unsigned DefaultPreallocThreads(const IdSet& cpus, unsigned cap) {
  // One thread per CPU the threads may run on: preallocation is bound by page-fault and
  // memory-clearing throughput, which scales with cores until memory bandwidth runs out.
  const size_t n = std::max<size_t>(cpus.Size(), 1);
  return static_cast<unsigned>(cap ? std::min<size_t>(n, cap) : n);
}

PreallocChoice ChoosePreallocator(const MemoryBackend& b, const QemuCaps& caps, PreallocMode mode, const IdSet& cpus) {
  const bool shared_memfd = b.type == BackendType::kMemfd && b.shared;
  const bool hugetlb = b.page_size_bytes > 0;
  const auto qemu = [](std::string why) { return PreallocChoice{PreallocBy::kQemu, std::move(why)}; };
  const auto launcher = [](std::string why) { return PreallocChoice{PreallocBy::kLauncher, std::move(why)}; };
  if (mode == PreallocMode::kQemu) return qemu("--prealloc qemu");
  if (!shared_memfd) {
    std::string kind = b.type != BackendType::kMemfd ? std::string(ToString(b.type)) + " backend" : "private memfd";
    return qemu(kind + ": only a shared memfd can be filled by qlaunch and handed to QEMU");
  }
  if (mode == PreallocMode::kLauncher) return launcher("--prealloc launcher");
  // --prealloc auto: the faster of the two, as measured (docs/benchmarks.md, docs/planner.md).
  if (!caps.thread_context) return launcher("QEMU " + caps.VersionString() + " has no thread-context");
  if (!hugetlb) {
    return qemu("4 KiB shared memfd: kept with QEMU's thread-context preallocation (qlaunch's gain is "
                "measured for hugetlb memfds)");
  }
  const unsigned cap = QemuPreallocThreadCap(caps);
  if (caps.VersionAtLeast(9, 0) && cpus.Size() <= cap) {
    return qemu("QEMU " + caps.VersionString() + " fills backends with a thread-context in parallel, with as many "
                "threads as qlaunch would use (" + std::to_string(std::max<size_t>(cpus.Size(), 1)) + ")");
  }
  if (caps.VersionAtLeast(9, 0)) {
    return launcher("QEMU " + caps.VersionString() + " would use at most " + std::to_string(cap) + " of the " +
                    std::to_string(cpus.Size()) + " CPUs near this memory");
  }
  return launcher("QEMU " + caps.VersionString() +
                  " fills its backends one after the other; qlaunch fills every backend at once, "
                  "while QEMU starts");
}

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

    PreallocChoice choice = ChoosePreallocator(b, caps, opts.prealloc, cpus);
    b.prealloc_reason = std::move(choice.reason);
    if (choice.by == PreallocBy::kLauncher) {
      b.prealloc = PreallocBy::kLauncher;
      b.launcher_fd = next_fd++;
      b.mem_path = "/proc/self/fd/" + std::to_string(b.launcher_fd);
      b.prealloc_cpus = cpus.Empty() ? usable : cpus;
      b.launcher_threads = user_threads ? user_threads : DefaultPreallocThreads(b.prealloc_cpus);  // no cap
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
      b.prealloc_threads =
          user_threads ? user_threads : DefaultPreallocThreads(b.prealloc_cpus, QemuPreallocThreadCap(caps));
  }
  return contexts;
}

}  // namespace qlaunch::qemu
