// ValidateDomain: runs every check; also the name and vCPU checks.
#include "domain/validate.h"

#include <set>
#include <string>
#include <vector>

#include "domain/validate_checks.h"
#include "domain/vcpu_counts.h"

namespace qlaunch::domain {

void Findings::Error(int line, std::string element, std::string message) {
  diags_.push_back(Diagnostic{Severity::kError, file_, line, std::move(element), std::move(message)});
}

void Findings::Warning(int line, std::string element, std::string message) {
  diags_.push_back(Diagnostic{Severity::kWarning, file_, line, std::move(element), std::move(message)});
}

std::string KiB(uint64_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

namespace {

constexpr size_t kMaxNameLength = 64;

void CheckCpuset(const std::optional<IdSet>& set, int line, const char* element, Findings& out) {
  if (set && set->Empty()) out.Error(line, element, "Invalid value of 'cpuset': empty set");
}

void CheckTopology(const DomainDef& def, Findings& out) {
  if (!def.cpu.topology) return;
  const CpuTopology& t = *def.cpu.topology;
  // Five 32-bit factors can overflow 64 bits and wrap around to the vCPU count: check each step.
  uint64_t product = 1;
  bool overflow = false;
  for (unsigned factor : {t.sockets, t.dies, t.clusters, t.cores, t.threads})
    overflow |= __builtin_mul_overflow(product, uint64_t{factor}, &product);
  if (overflow || product != def.vcpu.count)
    out.Error(t.line, "topology",
              "CPU topology doesn't match maximum vcpu count (sockets*dies*clusters*cores*threads = " +
                  (overflow ? std::string("more than 2^64") : std::to_string(product)) +
                  ", vcpu = " + std::to_string(def.vcpu.count) + ")");
}

void CheckVcpuPins(const DomainDef& def, Findings& out) {
  CheckCpuset(def.cputune.emulatorpin, def.cputune.emulatorpin_line, "emulatorpin", out);
  std::set<unsigned> seen;
  for (const VcpuPin& pin : def.cputune.vcpupins) {
    if (pin.vcpu >= def.vcpu.count)
      out.Error(pin.line, "vcpupin",
                "vcpupin for vcpu '" + std::to_string(pin.vcpu) + "', but the domain has only " +
                    std::to_string(def.vcpu.count) + " vCPUs");
    if (!seen.insert(pin.vcpu).second)
      out.Error(pin.line, "vcpupin", "duplicate vcpupin for vcpu '" + std::to_string(pin.vcpu) + "'");
    CheckCpuset(pin.cpuset, pin.line, "vcpupin", out);
  }
}

}  // namespace

void CheckName(const DomainDef& def, Findings& out) {
  const std::string& name = def.name;
  if (name.empty()) {
    out.Error(def.name_line, "name", "missing domain name");
    return;
  }
  if (name.size() > kMaxNameLength)
    out.Error(def.name_line, "name",
              "domain name '" + name + "' is longer than " + std::to_string(kMaxNameLength) + " characters");
  if (name.find('/') != std::string::npos) out.Error(def.name_line, "name", "name " + name + " cannot contain '/'");
  if (name.front() == '.') out.Error(def.name_line, "name", "domain name '" + name + "' must not start with '.'");
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) {
      out.Error(def.name_line, "name", "domain name must not contain control characters");
      break;
    }
}

// <vcpus>: every vCPU listed once, as many enabled as <vcpu current> says, and in the one layout
// QEMU can be given: -smp starts the first B slots (the enabled, not hotpluggable ones), the next
// enabled ones are plugged in order, the rest wait (disabled, hotpluggable).
void CheckVcpuStates(const Vcpu& vcpu, Findings& out) {
  if (vcpu.states.empty()) return;
  const unsigned boot = BootVcpus(vcpu), current = CurrentVcpus(vcpu);
  std::vector<const VcpuState*> by_id(vcpu.count, nullptr);
  unsigned enabled = 0;
  for (const VcpuState& s : vcpu.states) {
    enabled += s.enabled;
    if (s.id >= vcpu.count) {
      out.Error(s.line, "vcpu", "vcpu id '" + std::to_string(s.id) + "' is beyond the " + std::to_string(vcpu.count) +
                                    " vCPUs of <vcpu>");
      continue;
    }
    by_id[s.id] = &s;
  }
  if (boot == 0) {
    out.Error(vcpu.states_line, "vcpus", "no vCPU is enabled and not hotpluggable: QEMU starts at least vcpu '0'");
    return;
  }
  if (enabled != current) {
    out.Error(vcpu.states_line, "vcpus", std::to_string(enabled) + " vCPUs are enabled in <vcpus>, but <vcpu> runs " +
                                             std::to_string(current));
    return;
  }
  for (unsigned id = 0; id < vcpu.count; ++id) {
    const VcpuState* s = by_id[id];
    if (!s) {
      out.Error(vcpu.states_line, "vcpus", "vcpu '" + std::to_string(id) + "' is missing: <vcpus> lists every vCPU");
      continue;
    }
    const bool want_enabled = id < current, want_hotpluggable = id >= boot;
    if (s->enabled == want_enabled && (s->hotpluggable == want_hotpluggable || !s->enabled)) {
      if (!s->enabled && !s->hotpluggable)
        out.Error(s->line, "vcpu", "vcpu '" + std::to_string(id) + "' is disabled and not hotpluggable");
      continue;
    }
    out.Error(s->line, "vcpu", "vcpu '" + std::to_string(id) + "' cannot be " + (s->enabled ? "enabled" : "disabled") +
                                   (s->enabled ? (s->hotpluggable ? " and hotpluggable" : " and not hotpluggable") : "") +
                                   " here: QEMU starts vCPUs 0-" + std::to_string(boot - 1) +
                                   " (enabled, not hotpluggable), then the next enabled ones are plugged in order up "
                                   "to the " + std::to_string(current) + " that run");
  }
}

void CheckVcpus(const DomainDef& def, Findings& out) {
  const Vcpu& vcpu = def.vcpu;
  if (vcpu.count == 0) out.Error(vcpu.line, "vcpu", "vcpu count must be greater than 0");
  if (vcpu.current && *vcpu.current == 0) out.Error(vcpu.line, "vcpu", "current vCPU count must be greater than 0");
  if (vcpu.current && *vcpu.current > vcpu.count)
    out.Error(vcpu.line, "vcpu", "maximum vCPU count must not be less than current vCPU count");
  CheckCpuset(vcpu.cpuset, vcpu.line, "vcpu", out);
  CheckVcpuStates(vcpu, out);
  CheckTopology(def, out);
  CheckVcpuPins(def, out);
}

std::vector<Diagnostic> ValidateDomain(const DomainDef& def) {
  Findings out(def);
  CheckName(def, out);
  CheckVcpus(def, out);
  CheckMemorySizes(def, out);
  CheckNumaCells(def, out);
  CheckNumaTune(def, out);
  CheckMemoryBacking(def, out);
  CheckMemoryDevices(def, out);
  return out.Take();
}

std::vector<Diagnostic> ValidateMemoryDevice(const DomainDef& def, const MemoryDevice& mem) {
  Findings out(def);
  CheckMemoryDevice(def, mem, out);
  return out.Take();
}

}  // namespace qlaunch::domain
