#include "qemu_cmd/memory_hotplug_plan.h"

#include <algorithm>

#include "domain/memory_totals.h"
#include "domain/validate.h"
#include "qemu_cmd/device_plan.h"
#include "qemu_cmd/hotplug_qmp.h"
#include "qemu_cmd/pci_address.h"
#include "qemu_cmd/memory_plan.h"
#include "qemu_cmd/plan_diagnostic.h"
#include "qemu_cmd/render_object.h"
#include "qemu_cmd/thread_context_plan.h"

namespace qlaunch::qemu {

using nlohmann::json;

namespace {

[[noreturn]] void Fail(const domain::DeviceFragment& f, const std::string& message) {
  domain::DomainDef d;
  d.file = f.file;
  throw DiagnosticError(PlanError(d, f.line, "memory", message));
}

std::string KiB(uint64_t bytes) { return std::to_string(bytes / 1024); }

}  // namespace

// The running DIMMs with the slots plan.json recorded for them (document order), so that the
// planner keeps them where they are.
static domain::DomainDef WithRecordedSlots(const domain::DomainDef& running, const json& memory_devices) {
  domain::DomainDef def = running;
  std::vector<json> dimms;
  for (const json& m : memory_devices)
    if (m.value("driver", "") != "virtio-mem-pci") dimms.push_back(m);
  size_t k = 0;
  for (domain::MemoryDevice& m : def.devices.memory) {
    if (m.model == "virtio-mem") continue;
    if (k < dimms.size() && dimms[k].contains("slot")) m.slot = dimms[k]["slot"].get<unsigned>();
    ++k;
  }
  return def;
}

MemoryAttachPlan PlanMemoryAttach(const RunningDomain& running_domain, const json& memory_devices,
                                  const domain::DeviceFragment& f, const numa::HostTopology& host,
                                  const QemuCaps& caps) {
  const domain::DomainDef running = WithRecordedSlots(*running_domain.def, memory_devices);
  const domain::MemoryDevice& mem = f.devices.memory.at(0);
  const bool virtio_mem = mem.model == "virtio-mem";
  if (mem.model != "dimm" && !virtio_mem)
    Fail(f, "attaching a <memory model='" + mem.model + "'> is not supported by qlaunch (only dimm and virtio-mem)");
  if (!running.max_memory_bytes) Fail(f, "cannot use/hotplug a memory device when domain 'maxMemory' is not defined");
  domain::DomainDef def = running;
  def.file = f.file;
  def.devices.memory.push_back(mem);
  def.devices.memory.back().line = f.line;
  if (const std::vector<Diagnostic> problems = domain::ValidateMemoryDevice(def, def.devices.memory.back());
      !problems.empty())
    throw DiagnosticError(problems);
  // libvirt counts every memory device against the slots, virtio-mem too.
  if (running.max_memory_slots && running.devices.memory.size() + 1 > running.max_memory_slots)
    Fail(f, "no free memory device slot available");
  const uint64_t total = domain::TotalMemoryBytes(def);
  if (total > *running.max_memory_bytes)
    Fail(f, "Attaching memory device with size '" + KiB(mem.size_bytes) + "' would exceed domain's maxMemory config size '" +
                KiB(*running.max_memory_bytes) + "'");
  if (mem.slot && !virtio_mem)
    for (const domain::MemoryDevice& m : running.devices.memory)
      if (m.slot == mem.slot && m.model != "virtio-mem")
        Fail(f, "memory device slot '" + std::to_string(*mem.slot) + "' is already being used by another memory device");

  // The same planner as a start, on the running definition with this device last: the DIMMs
  // before it keep the slots they were given, a DIMM takes the lowest free slot.
  PlanOptions opts;
  MemoryLayout layout = PlanMemory(def, host, caps, opts);
  MemoryAttachPlan p;
  p.notes = std::move(layout.notes);
  p.backend = layout.backends.back();
  p.device = layout.devices.back();
  if (virtio_mem) {
    // libvirt names a hot-plugged virtio-mem device after the highest running one.
    const std::string n = std::to_string(NextAliasIndex(running_domain.devices, "virtiomem"));
    p.device.id = "virtiomem" + n;
    p.backend.id = p.device.memdev = "memvirtiomem" + n;
  }
  std::vector<MemoryBackend> one = {p.backend};
  std::vector<ThreadContext> contexts = PlanPrealloc(one, def, host, caps, opts, &p.notes);
  p.backend = one[0];
  // A running QEMU under -sandbox resourcecontrol=deny (always rendered when compiled in) may not
  // set CPU affinities: a thread-context made now fails ("Setting CPU affinity failed"). QEMU's
  // own preallocation then runs on unpinned threads; qlaunch's workers are pinned either way.
  if (!contexts.empty() && !caps.sandbox) p.context = contexts[0];
  if (!p.context) p.backend.thread_context.clear();
  p.pool_needs = PoolNeeds(one);
  p.memory_bytes_after = total;
  p.record.family = "memory";
  p.record.element = "memory";
  p.record.line = f.line;
  p.record.driver = p.device.driver;
  p.record.id = p.device.id;
  if (!virtio_mem) {
    p.device_add = {{"driver", p.device.driver}, {"node", p.device.node}, {"memdev", p.device.memdev}, {"id", p.device.id}};
    if (p.device.slot) p.device_add["slot"] = *p.device.slot;
    if (p.device.addr) p.device_add["addr"] = *p.device.addr;
    return p;
  }
  // virtio-mem is a PCI device: the start's memory family renders it, the hot-plug PCI
  // assignment gives it a free hotpluggable slot (or checks the one the XML asks for).
  MemoryLayout mine;
  mine.devices = {p.device};
  PlanOptions device_opts;
  const DeviceContext ctx{&def, &caps, &device_opts, IsQ35(def.os.machine), &mine, nullptr};
  std::vector<PlannedDevice> planned;
  PlanMemoryDevices(ctx, &planned);
  PlannedDevice& d = planned.at(0);
  AssignHotplugPciAddress(ctx, RunningPlannedDevices(running_domain), &d);
  p.device_add = DeviceAddOf(d).arguments;
  p.record.props = d.props;
  p.record.slot = d.slot;
  return p;
}

json MemoryAttachPlan::ContextAdd(const QemuCaps& caps) const {
  QemuCaps json_caps = caps;
  json_caps.json_object = true;
  return context ? json::parse(RenderThreadContextObject(*context, json_caps)) : json();
}

json MemoryAttachPlan::ObjectAdd(const QemuCaps& caps, int qemu_fd) const {
  MemoryBackend b = backend;
  if (b.prealloc == PreallocBy::kLauncher) b.mem_path = "/proc/self/fd/" + std::to_string(qemu_fd);
  QemuCaps json_caps = caps;
  json_caps.json_object = true;  // QMP's object-add takes the properties as JSON, on every QEMU
  return json::parse(RenderBackendObject(b, json_caps));
}

json MemoryAttachPlan::BackendJson() const {
  LaunchPlan plan;
  plan.backends = {backend};
  return ToJson(plan).at("backends").at(0);
}

json MemoryAttachPlan::DeviceJson() const {
  LaunchPlan plan;
  plan.memory_devices = {device};
  return ToJson(plan).at("memory_devices").at(0);
}

MemoryDetachPlan PlanMemoryDetach(const domain::DomainDef& running, const json& memory_devices,
                                  const domain::DeviceFragment& f) {
  const domain::MemoryDevice& want = f.devices.memory.at(0);
  // The running devices' ids, as the start (and attach-device) named them: plan.json's records in
  // document order, the DIMMs and the virtio-mem devices each in their own order.
  std::vector<json> dimms, virtio;
  for (const json& m : memory_devices)
    (m.value("driver", "") == "virtio-mem-pci" ? virtio : dimms).push_back(m);
  size_t k_dimm = 0, k_virtio = 0;
  for (const domain::MemoryDevice& m : running.devices.memory) {
    const bool is_virtio = m.model == "virtio-mem";
    std::vector<json>& list = is_virtio ? virtio : dimms;
    size_t& k = is_virtio ? k_virtio : k_dimm;
    const json rec = k < list.size() ? list[k] : json::object();
    ++k;
    const std::string id = rec.value("id", "");
    if (m.model != want.model || m.size_bytes != want.size_bytes || m.node.value_or(0) != want.node.value_or(0)) continue;
    if (want.slot && (!rec.contains("slot") || rec["slot"].get<unsigned>() != *want.slot)) continue;
    MemoryDetachPlan p;
    p.detach.element = "memory";
    p.detach.id = id;
    p.detach.running_line = m.line;
    p.memdev = rec.value("memdev", "");
    p.detach.release.push_back({"object-del", {{"id", p.memdev}}});
    p.size_bytes = m.size_bytes;
    if (id.empty() || p.memdev.empty()) Fail(f, "the running domain's plan.json does not name this memory device");
    return p;
  }
  Fail(f, "matching memory device was not found");
}

}  // namespace qlaunch::qemu
