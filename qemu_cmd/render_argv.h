// RenderArgv: the whole QEMU argv for a planned launch. Pure string building from decisions
// already made (memory layout, contexts, accelerator, CPU model); the only checks left here
// are about syntax (e.g. a CPU model with a comma).
#pragma once

#include <string>
#include <vector>

#include "domain/domain_def.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/launch_plan.h"
#include "qemu_cmd/memory_plan.h"

namespace qlaunch::qemu {

struct ArgvInput {
  const domain::DomainDef* def = nullptr;
  const QemuCaps* caps = nullptr;
  const PlanOptions* opts = nullptr;
  const MemoryLayout* memory = nullptr;            // backends with prealloc decisions applied
  const std::vector<ThreadContext>* contexts = nullptr;
  std::string emulator;
  std::string accel;      // "kvm" | "tcg"
  std::string cpu_model;  // "" to omit -cpu
  std::vector<DeviceRecord>* devices = nullptr;  // when set: the planned devices, as rendered
};

// Order: emulator, -name, -S, -machine, -accel, -cpu, -m, (pc.ram), -overcommit, -smp,
// (contexts, backends, -numa node per cell), -uuid, -display none, -no-user-config,
// -nodefaults, QMP, -kernel/-initrd/-append, -boot, memory devices, disks, serial/console,
// balloon, -sandbox (last). Each thread-context comes right before its first user.
std::vector<std::string> RenderArgv(const ArgvInput& in);

// "-smp" value: N[,maxcpus=M],sockets=S[,dies=D][,clusters=C],cores=C,threads=T.
std::string RenderSmp(const domain::DomainDef& def, const QemuCaps& caps);


}  // namespace qlaunch::qemu
