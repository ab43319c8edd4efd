#include "domain/vcpu_counts.h"

namespace qlaunch::domain {

unsigned CurrentVcpus(const Vcpu& v) { return v.current.value_or(v.count); }

unsigned BootVcpus(const Vcpu& v) {
  if (v.states.empty()) return CurrentVcpus(v);
  unsigned n = 0;
  for (const VcpuState& s : v.states) n += s.enabled && !s.hotpluggable;
  return n;
}

}  // namespace qlaunch::domain
