#include "numa/cpu_affinity.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace qlaunch::numa {

IdSet CurrentCpuAffinity() {
  // The kernel's mask may be wider than cpu_set_t (1024 CPUs): grow until it fits.
  for (int ncpus = CPU_SETSIZE;; ncpus *= 2) {
    std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set(CPU_ALLOC(ncpus), [](cpu_set_t* s) { CPU_FREE(s); });
    if (!set) throw std::runtime_error("sched_getaffinity: out of memory");
    size_t size = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(size, set.get());
    if (sched_getaffinity(0, size, set.get()) != 0) {
      if (errno == EINVAL && ncpus < (1 << 22)) continue;
      throw std::runtime_error(std::string("sched_getaffinity: ") + std::strerror(errno));
    }
    IdSet cpus;
    for (int cpu = 0; cpu < ncpus; ++cpu)
      if (CPU_ISSET_S(cpu, size, set.get())) cpus.Insert(static_cast<unsigned>(cpu));
    return cpus;
  }
}

}  // namespace qlaunch::numa
