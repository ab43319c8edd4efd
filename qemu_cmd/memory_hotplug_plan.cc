#include "qemu_cmd/memory_hotplug_plan.h"

#include <algorithm>

#include "domain/memory_totals.h"
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

// Where a running DIMM sits: its slot as plan.json recorded it.
std::optional<unsigned> RecordedSlot(const json& memory_devices, const std::string& id) {
  for (const json& m : memory_devices)
    if (m.value("id", "") == id && m.contains("slot")) return m["slot"].get<unsigned>();
  return std::nullopt;
}

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

MemoryAttachPlan PlanMemoryAttach(const domain::DomainDef& running_def, const json& memory_devices,
                                  const domain::DeviceFragment& f, const numa::HostTopology& host,
                                  const QemuCaps& caps) {
  const domain::DomainDef running = WithRecordedSlots(running_def, memory_devices);
  const domain::MemoryDevice& dimm = f.devices.memory.at(0);
  if (dimm.model != "dimm")
    Fail(f, "attaching a <memory model='" + dimm.model + "'> is not supported by qlaunch (only dimm)");
  if (!running.max_memory_bytes) Fail(f, "cannot use/hotplug a memory device when domain 'maxMemory' is not defined");
  if (dimm.size_bytes == 0) Fail(f, "memory device size must be greater than 0");
  domain::DomainDef def = running;
  def.file = f.file;
  def.devices.memory.push_back(dimm);
  def.devices.memory.back().line = f.line;
  const uint64_t total = domain::TotalMemoryBytes(def);
  if (total > *running.max_memory_bytes)
    Fail(f, "Attaching memory device with size '" + KiB(dimm.size_bytes) + "' would exceed domain's maxMemory config size '" +
                KiB(*running.max_memory_bytes) + "'");
  if (dimm.node && !running.cpu.cells.empty() &&
      std::none_of(running.cpu.cells.begin(), running.cpu.cells.end(), [&](const auto& c) { return c.id == *dimm.node; }))
    Fail(f, "can't add memory backend for guest node '" + std::to_string(*dimm.node) + "' as the guest has only '" +
                std::to_string(running.cpu.cells.size()) + "' NUMA nodes configured");
  if (dimm.slot) {
    if (running.max_memory_slots && *dimm.slot >= running.max_memory_slots)
      Fail(f, "memory device slot '" + std::to_string(*dimm.slot) + "' exceeds slots count '" +
                  std::to_string(running.max_memory_slots) + "'");
    for (const domain::MemoryDevice& m : running.devices.memory)
      if (m.slot == dimm.slot && m.model != "virtio-mem")
        Fail(f, "memory device slot '" + std::to_string(*dimm.slot) + "' is already being used by another memory device");
  }

  // The same planner as a start, on the running definition with this DIMM last: the DIMMs before
  // it keep the slots they were given, this one takes the lowest free slot.
  PlanOptions opts;
  MemoryLayout layout = PlanMemory(def, host, caps, opts);
  MemoryAttachPlan p;
  p.notes = std::move(layout.notes);
  p.backend = layout.backends.back();
  p.device = layout.devices.back();
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

json MemoryAttachPlan::DeviceAdd() const {
  json d = {{"driver", device.driver}, {"node", device.node}, {"memdev", device.memdev}, {"id", device.id}};
  if (device.slot) d["slot"] = *device.slot;
  if (device.addr) d["addr"] = *device.addr;
  return d;
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
  // The running DIMMs' ids, as the start (and attach-device) named them: plan.json's records in
  // document order.
  std::vector<json> dimms;
  for (const json& m : memory_devices)
    if (m.value("driver", "") != "virtio-mem-pci") dimms.push_back(m);
  size_t k = 0;
  for (const domain::MemoryDevice& m : running.devices.memory) {
    if (m.model == "virtio-mem") continue;
    const json rec = k < dimms.size() ? dimms[k] : json::object();
    ++k;
    const std::string id = rec.value("id", "");
    const std::optional<unsigned> slot = RecordedSlot(memory_devices, id);
    if (m.model != want.model || m.size_bytes != want.size_bytes || m.node.value_or(0) != want.node.value_or(0)) continue;
    if (want.slot && want.slot != slot) continue;
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
