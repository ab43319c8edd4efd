#include "qemu_cmd/planner.h"

#include "domain/vcpu_counts.h"
#include "qemu_cmd/plan_diagnostic.h"

#include "qemu_cmd/memory_plan.h"
#include "qemu_cmd/net_plan.h"
#include "qemu_cmd/render_argv.h"
#include "qemu_cmd/thread_context_plan.h"

namespace qlaunch::qemu {

namespace {

constexpr const char* kDefaultEmulator = "qemu-system-x86_64";

std::string PickEmulator(const domain::DomainDef& def, const QemuCaps& caps, const PlanOptions& opts) {
  if (!caps.binary.empty()) return caps.binary;
  if (!opts.emulator.empty()) return opts.emulator;
  if (!def.devices.emulator.empty()) return def.devices.emulator;
  return kDefaultEmulator;
}

// -accel: what the XML asks for, kvm for <domain type='kvm'> and tcg otherwise. Where this QEMU
// cannot use KVM here, the plan says so once (kKvmUnusableNote) and stays a KVM plan.
std::string PickAccel(const domain::DomainDef& def, const QemuCaps& caps, std::vector<Diagnostic>* notes) {
  if (def.type != "kvm") return "tcg";
  if (!caps.kvm) notes->push_back(PlanWarning(def, 0, "domain", kKvmUnusableNote));
  return "kvm";
}

// -cpu: the model, or what a mode means for the chosen accelerator; "" to leave QEMU's default.
std::string PickCpu(const domain::DomainDef& def, const std::string& accel, std::vector<Diagnostic>* notes) {
  const std::string& mode = def.cpu.mode;
  if (mode == "host-passthrough" || mode == "host-model") {
    if (accel == "kvm") return "host";
    notes->push_back(PlanWarning(def, def.cpu.line, "cpu", "cpu mode '" + mode + "' needs KVM; using 'max' under TCG"));
    return "max";
  }
  if (mode == "maximum") return "max";
  return def.cpu.model;
}

}  // namespace

LaunchPlan PlanLaunch(const domain::DomainDef& def, const numa::HostTopology& host, const QemuCaps& caps,
                      const PlanOptions& opts) {
  LaunchPlan plan;
  plan.name = def.name;
  plan.emulator = PickEmulator(def, caps, opts);

  MemoryLayout memory = PlanMemory(def, host, caps, opts);
  plan.notes = memory.notes;
  plan.contexts = PlanPrealloc(memory.backends, def, host, caps, opts, &plan.notes);

  ArgvInput in;
  in.def = &def;
  in.caps = &caps;
  in.opts = &opts;
  in.memory = &memory;
  in.contexts = &plan.contexts;
  in.emulator = plan.emulator;
  in.accel = PickAccel(def, caps, &plan.notes);
  in.cpu_model = PickCpu(def, in.accel, &plan.notes);
  if (!caps.sandbox)
    plan.notes.push_back(PlanWarning(def, 0, "", "this QEMU has no -sandbox (seccomp); running without it"));
  in.devices = &plan.devices;
  plan.argv = RenderArgv(in);
  const DeviceContext dctx{&def, &caps, &opts, IsQ35(def.os.machine)};
  for (Diagnostic& d : NetPlanNotes(dctx)) plan.notes.push_back(std::move(d));
  for (const std::string& nic : LinkDownNicIds(def))
    plan.before_cont.push_back({"set_link", "{\"name\":\"" + nic + "\",\"up\":false}"});

  if (domain::CurrentVcpus(def.vcpu) > domain::BootVcpus(def.vcpu)) plan.plug_vcpus_to = domain::CurrentVcpus(def.vcpu);
  plan.initial_memory_bytes = memory.initial_bytes;
  plan.pool_needs = PoolNeeds(memory.backends);
  plan.backends = std::move(memory.backends);
  plan.memory_devices = std::move(memory.devices);
  return plan;
}

}  // namespace qlaunch::qemu
