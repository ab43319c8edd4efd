#include "qemu_cmd/render_argv.h"

#include <map>
#include <set>

#include "domain/vcpu_counts.h"
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/machine_plan.h"
#include "qemu_cmd/option_escape.h"
#include "qemu_cmd/plan_diagnostic.h"
#include "qemu_cmd/render_object.h"

namespace qlaunch::qemu {

namespace {

class Argv {
 public:
  void Add(std::string a) { v_.push_back(std::move(a)); }
  void Add(std::string opt, std::string value) {
    v_.push_back(std::move(opt));
    v_.push_back(std::move(value));
  }
  std::vector<std::string>& v() { return v_; }

 private:
  std::vector<std::string> v_;
};

// Renders one backend, preceded by its thread-context if this is the context's first user.
void AddBackend(Argv& a, const MemoryBackend& b, const ArgvInput& in, std::set<std::string>* rendered_contexts) {
  if (!b.thread_context.empty() && rendered_contexts->insert(b.thread_context).second) {
    for (const ThreadContext& tc : *in.contexts)
      if (tc.id == b.thread_context) a.Add("-object", RenderThreadContextObject(tc, *in.caps));
  }
  a.Add("-object", RenderBackendObject(b, *in.caps));
}

}  // namespace

std::string RenderSmp(const domain::DomainDef& def, const QemuCaps& caps) {
  const domain::Vcpu& v = def.vcpu;
  const unsigned boot = domain::BootVcpus(v);  // the others that run are plugged before cont
  std::string s = std::to_string(boot < v.count ? boot : v.count);
  if (boot < v.count) s += ",maxcpus=" + std::to_string(v.count);
  if (const auto& t = def.cpu.topology) {
    s += ",sockets=" + std::to_string(t->sockets) + ",dies=" + std::to_string(t->dies);
    if (t->clusters > 1) {
      if (!caps.VersionAtLeast(7, 0))
        throw DiagnosticError(PlanError(def, t->line, "topology", "this QEMU has no CPU clusters (QEMU 7.0 or newer)"));
      s += ",clusters=" + std::to_string(t->clusters);
    }
    s += ",cores=" + std::to_string(t->cores) + ",threads=" + std::to_string(t->threads);
  } else {
    s += ",sockets=" + std::to_string(v.count) + ",cores=1,threads=1";
  }
  return s;
}

std::vector<std::string> RenderArgv(const ArgvInput& in) {
  const domain::DomainDef& def = *in.def;
  const QemuCaps& caps = *in.caps;
  const PlanOptions& opts = *in.opts;
  const MemoryLayout& mem = *in.memory;
  std::set<std::string> rendered_contexts;
  Argv a;
  DeviceContext dctx{&def, &caps, &opts, IsQ35(def.os.machine)};
  const MachineArgs machine_args = PlanMachine(dctx);
  auto add_all = [&](const std::vector<DeviceArg>& args) {
    for (const DeviceArg& d : args) {
      a.Add(d.opt);
      if (!d.value.empty()) a.Add(d.value);
    }
  };

  a.Add(in.emulator);
  a.Add("-name", KeyValueBuilder().Add("guest", std::string_view(def.name)).AddBool("debug-threads", true).str());
  if (!opts.incoming) a.Add("-S");  // an incoming QEMU waits for the stream instead (PlanOptions)

  // The machine type is the implied first value of -machine: QEMU would read a '=' in it as
  // a key of its own, which escaping cannot prevent.
  if (def.os.machine.find('=') != std::string::npos)
    throw DiagnosticError(PlanError(def, def.os.line, "type", "invalid machine type '" + def.os.machine + "'"));
  add_all(machine_args.before_machine);
  KeyValueBuilder machine(def.os.machine.empty() ? "pc" : def.os.machine);
  if (mem.machine_memory_backend) machine.Add("memory-backend", "pc.ram");
  if (mem.has_nvdimm) machine.AddBool("nvdimm", true);
  if (def.memory_backing.nosharepages) machine.AddBool("mem-merge", false);
  // As libvirt 9.0 with its default qemu.conf (dump_guest_core = 0): guest RAM is left out of a
  // core dump of QEMU. Every memory backend takes its "dump" from this, hot-plugged ones too.
  machine.AddBool("dump-guest-core", false);
  for (const auto& [key, value] : machine_args.machine_props) machine.Add(key, std::string_view(value));
  a.Add("-machine", machine.str());
  a.Add("-accel", in.accel);
  if (!in.cpu_model.empty() || !machine_args.cpu_suffix.empty()) {
    if (in.cpu_model.find(',') != std::string::npos)
      throw DiagnosticError(PlanError(def, def.cpu.line, "model", "a CPU model name cannot contain ','"));
    std::string cpu = in.cpu_model.empty() ? "qemu64" : in.cpu_model;  // QEMU's (and libvirt's) default
    for (const std::string& piece : machine_args.cpu_suffix) cpu += piece;
    a.Add("-cpu", cpu);
  }
  add_all(machine_args.after_cpu);

  std::string m = "size=" + std::to_string(mem.initial_bytes / kKiB) + "k";
  if (mem.max_bytes)
    m += ",slots=" + std::to_string(mem.slots) + ",maxmem=" + std::to_string(*mem.max_bytes / kKiB) + "k";
  a.Add("-m", m);
  for (const MemoryBackend& b : mem.backends)
    if (!b.guest_node && !b.is_device) AddBackend(a, b, in, &rendered_contexts);  // pc.ram
  a.Add("-overcommit", def.memory_backing.locked ? "mem-lock=on" : "mem-lock=off");
  a.Add("-smp", RenderSmp(def, caps));

  for (const MemoryBackend& b : mem.backends) {
    if (b.is_device || !b.guest_node) continue;
    AddBackend(a, b, in, &rendered_contexts);
    IdSet cpus;
    for (const auto& c : def.cpu.cells)
      if (c.id == *b.guest_node) cpus = c.cpus;
    a.Add("-numa", RenderNumaNode(*b.guest_node, cpus, b.id));
  }

  if (!def.uuid.empty()) a.Add("-uuid", def.uuid);
  add_all(machine_args.after_uuid);
  bool display = false;
  for (const domain::Graphics& g : def.devices.graphics) display |= g.type == "vnc" || g.type == "spice";
  if (!display) a.Add("-display", "none");
  a.Add("-no-user-config");
  a.Add("-nodefaults");
  if (opts.qmp_fd >= 0 || !opts.qmp_socket.empty()) {
    KeyValueBuilder qmp("socket");
    qmp.Add("id", "qmp");
    if (opts.qmp_fd >= 0) qmp.Add("fd", opts.qmp_fd);
    else qmp.Add("path", std::string_view(opts.qmp_socket));
    a.Add("-chardev", qmp.AddBool("server", true).AddBool("wait", false).str());
    a.Add("-mon", "chardev=qmp,mode=control");
  }
  // The supervisor's own monitor: QEMU serves one client per monitor, and `qlaunch run` keeps its
  // connection for the events while list, destroy and the other verbs use the first.
  if (opts.events_fd >= 0) {
    a.Add("-chardev", KeyValueBuilder("socket").Add("id", "qmp-events").Add("fd", opts.events_fd)
                          .AddBool("server", true).AddBool("wait", false).str());
    a.Add("-mon", "chardev=qmp-events,mode=control");
  }
  add_all(machine_args.after_monitor);
  // Lifecycle: QEMU exits on a guest reboot only for on_reboot='destroy' (as libvirt renders it);
  // it stays after a guest poweroff or panic when someone decides what follows (`qlaunch run`,
  // like libvirt, always) or when the action is to preserve the guest.
  if (def.lifecycle.on_reboot == "destroy") a.Add("-no-reboot");
  if (opts.supervised || def.lifecycle.on_poweroff == "preserve" || def.lifecycle.on_crash == "preserve")
    a.Add("-no-shutdown");
  // Plain argv values (not key=value): QEMU takes them as they are.
  if (!def.os.kernel.empty()) a.Add("-kernel", def.os.kernel);
  if (!def.os.initrd.empty()) a.Add("-initrd", def.os.initrd);
  if (!def.os.cmdline.empty()) a.Add("-append", def.os.cmdline);
  add_all(machine_args.before_boot);
  // libvirt 9.0: the order is in each device's bootindex (qemu_cmd/boot_order.h).
  a.Add("-boot", def.os.bootmenu && *def.os.bootmenu ? "menu=on,strict=on" : "strict=on");

  // The memory devices' backends, placed by the device plan's memory family.
  std::map<std::string, std::vector<DeviceArg>> backend_args;
  for (const MemoryBackend& b : mem.backends) {
    if (!b.is_device) continue;
    Argv objects;
    AddBackend(objects, b, in, &rendered_contexts);
    for (size_t i = 0; i + 1 < objects.v().size(); i += 2)
      backend_args[b.id].push_back({objects.v()[i], objects.v()[i + 1]});
  }
  dctx.memory = &mem;
  dctx.memory_backend_args = &backend_args;
  const std::vector<PlannedDevice> devices = PlanDevices(dctx);
  for (std::string& arg : RenderDevicePlan(devices)) a.Add(std::move(arg));
  if (in.devices)
    for (const PlannedDevice& d : devices)
      in.devices->push_back({d.element, d.line, d.family, d.driver, d.id, d.props, d.slot});
  if (opts.incoming) a.Add("-incoming", "defer");  // where libvirt 9.0 puts it, before -sandbox
  if (caps.sandbox) a.Add("-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
  return std::move(a.v());
}

}  // namespace qlaunch::qemu
