// attach-device and detach-device (hotplug.h): both verbs' way in, and the plain devices (disks,
// interfaces, character devices, ...). The memory devices' own side (DIMM, virtio-mem) lives in
// memory_hotplug.cc, the change journal's recovery both verbs begin with in change_recovery.cc.
#include "launcher/lifecycle/change/hotplug.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/unique_fd.h"
#include "domain/memory_totals.h"
#include "domain/parse_fragment.h"
#include "launcher/host/device_host.h"
#include "launcher/host/file_labels.h"
#include "launcher/host/qemu_user.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/change/change_recovery.h"
#include "launcher/lifecycle/change/media_record.h"
#include "launcher/lifecycle/change/memory_hotplug.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "launcher/lifecycle/start/inputs.h"
#include "qemu_cmd/hotplug_plan.h"
#include "qemu_cmd/memory_hotplug_plan.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

json CallJson(const qemu::QmpCall& c) { return {{"execute", c.execute}, {"arguments", c.arguments}}; }

// The files of the device QEMU opens by path, as the start gives them to QEMU's user.
std::vector<LabelTarget> DeviceLabelTargets(const domain::DeviceFragment& f) {
  domain::DomainDef one;
  one.file = f.file;
  one.devices.disks = f.devices.disks;
  return LabelTargets(one);
}

// Testing aid: $QLAUNCH_HOTPLUG_FAULT=device_add makes QEMU's device_add fail as if QEMU refused
// it (after the backends were added: the undo path); =qemu-dies kills QEMU just before device_add
// (the error says the domain ended, not that it is unchanged); =crash ends qlaunch once the QMP
// commands succeeded, before the state dir records them (change.json recovery; change-media too).
bool Fault(const char* what) {
  const char* f = std::getenv("QLAUNCH_HOTPLUG_FAULT");
  return f && std::string(f) == what;
}

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The host side of a tap or listening socket, made by the start's own parts on a definition
// holding just this device; its fd comes back to pass to QEMU.
struct HostDevice {
  std::unique_ptr<DeviceHostPart> part;
  UniqueFd fd;
  json summary = json::object();
};

void MakeHostDevice(const qemu::AttachPlan& plan, const domain::DeviceFragment& f, const fs::path& dir,
                    const StateDir& state, const QemuUser& user, HostDevice* out) {
  if (plan.host_fd == qemu::AttachPlan::HostFd::kNone) return;
  domain::DomainDef one;
  one.file = f.file;
  if (plan.host_fd == qemu::AttachPlan::HostFd::kTap) {
    domain::Interface nic = f.devices.interfaces.at(0);
    for (const auto& [k, v] : plan.record.props)
      if (k == "mac") nic.mac = v;
    one.devices.interfaces.push_back(nic);
    out->part = MakeNetHost();
  } else {
    one.devices.chardevs = f.devices.chardevs;
    out->part = MakeChardevHost();
  }
  DeviceHostContext ctx{&one, dir, state.root(), &user};
  qemu::DeviceResources res;
  FdNumbers fds;
  out->part->Plan(ctx, &res, &fds);
  out->part->Create(ctx, [&](int, int fd) { out->fd.Reset(::dup(fd)); });
  if (out->fd.get() < 0) throw std::runtime_error("attach-device: no fd for the device's host side");
  out->part->Summary(&out->summary);
}

}  // namespace

json ToJson(const HotplugResult& r) {
  json j = {{"element", r.element}, {"alias", r.id}, {"ms", r.ms}};
  if (r.slot) {
    char addr[64];
    std::snprintf(addr, sizeof addr, "%s:%02x.%x", r.slot->bus.c_str(), r.slot->slot, r.slot->function);
    j["pci"] = addr;
  }
  if (!r.tap.empty()) j["tap"] = r.tap;
  if (!r.released) j["released"] = false;
  if (!r.prealloc.empty()) {
    j["prealloc"] = r.prealloc;
    j["fill_ms"] = r.fill_ms;
  }
  if (r.prealloc == "launcher") {
    j["fill_threads"] = r.fill_threads;
    j["fill_cpus"] = r.fill_cpus.Ids();
    j["fill_observed_cpus"] = r.fill_observed_cpus.Ids();
  }
  return j;
}

namespace {

// What attach and detach begin with: the domain's QMP session (the state table asked for
// `verb`), what a killed qlaunch left settled, the running state, the device file.
struct Change {
  DomainSession session;
  fs::path dir;
  RunningState st;
  domain::DeviceFragment fragment;
  qemu::RunningDomain running() const { return {&st.def, st.records, st.node_index, (dir / "channel").string()}; }
};

Change BeginChange(const StateDir& state, const std::string& name, Verb verb, const std::string& device_file,
                   std::chrono::milliseconds timeout) {
  Change c{OpenDomainSession(state, name, verb, timeout), state.DomainDir(name), {}, {}};
  RecoverChanges(state, name, *c.session.qmp, timeout);
  c.st = LoadRunningState(c.dir);
  c.fragment = domain::ParseDeviceFile(device_file);
  return c;
}

}  // namespace

HotplugResult AttachDevice(const StateDir& state, const std::string& name, const std::string& device_file,
                           const HotplugOptions& opts) {
  Change c = BeginChange(state, name, Verb::kAttachDevice, device_file, opts.qmp_timeout);
  DomainSession& s = c.session;
  const fs::path& dir = c.dir;
  RunningState& st = c.st;
  const domain::DeviceFragment& f = c.fragment;
  if (f.element == "memory") return AttachMemoryDevice(name, s, st, f, opts);
  const std::string& text = f.text;  // the bytes parsed, not a second read of the file
  const qemu::RunningDomain running = c.running();
  const json argv = st.plan.value("argv", json::array());
  if (argv.empty() || !argv[0].is_string()) throw std::runtime_error(dir.string() + "/plan.json names no emulator");
  const qemu::QemuCaps caps = LoadCaps(argv[0].get<std::string>());
  qemu::AttachPlan plan = qemu::PlanAttach(running, f, caps);
  const QemuUser user = RecordedQemuUser(dir, st.def);

  // The host side: the image's owner, the tap or socket. Undone below on any failure.
  HostDevice host;
  bool labelled = false;
  auto undo_host = [&] {
    if (host.part) host.part->Undo();
    host.fd.Reset(-1);
    if (labelled) GiveBack(state, dir, plan.files, st.def);
  };
  std::vector<json> undo;
  try {
    if (!plan.files.empty()) {
      labelled = true;
      state.WithLock([&] { RelabelForQemu(DeviceLabelTargets(f), user, dir); });
    }
    MakeHostDevice(plan, f, dir, state, user, &host);
  } catch (...) {
    undo_host();
    throw;
  }
  json host_nic;
  if (!f.devices.interfaces.empty()) {
    host_nic = host.summary.contains("interfaces") ? host.summary["interfaces"].at(0)
                                                   : json{{"type", f.devices.interfaces[0].type},
                                                          {"model", f.devices.interfaces[0].model},
                                                          {"tap", ""},
                                                          {"bridge", f.devices.interfaces[0].source_bridge}};
    for (const auto& [k, v] : plan.record.props)
      if (k == "mac") host_nic["mac"] = v;
  }
  for (const qemu::HotplugStep& step : plan.steps) undo.push_back(CallJson(step.undo));
  std::string socket;
  if (host.summary.contains("chardev_sockets")) socket = host.summary["chardev_sockets"].at(0);
  WriteChange(dir, {{"op", "attach"}, {"id", plan.record.id}, {"xml", text}, {"record", qemu::ToJson(plan.record)},
                    {"node_index", plan.node_index}, {"host_nic", host_nic}, {"undo", undo}, {"files", plan.files},
                    {"socket", socket}});

  const auto t0 = Clock::now();
  size_t done = 0;
  try {
    for (const qemu::HotplugStep& step : plan.steps) {
      if (step.call.execute == "device_add" && Fault("device_add"))
        throw qemu::QmpError("fault injected at device_add (QLAUNCH_HOTPLUG_FAULT)");
      if (step.call.execute == "device_add" && Fault("qemu-dies")) ::kill(s.qemu.pid, SIGKILL);
      if (step.call.pass_fd)
        s.qmp->ExecuteWithFd(step.call.execute, step.call.arguments, host.fd.get(), opts.qmp_timeout);
      else
        s.qmp->Execute(step.call.execute, step.call.arguments, opts.qmp_timeout);
      ++done;
    }
  } catch (const std::exception& e) {
    for (size_t i = done; i-- > 0;) RunQuietly(*s.qmp, undo[i], opts.qmp_timeout);
    undo_host();
    ClearChange(dir);
    throw std::runtime_error("attach-device " + name + ": QEMU refused " + plan.steps[done].call.execute + " of the <" +
                             f.element + "> in " + device_file + ": " + e.what() + UnchangedOrEnded(s, e, dir));
  }
  if (Fault("crash")) std::_Exit(9);
  HotplugResult r;
  r.ms = MsSince(t0);
  r.element = f.element;
  r.id = plan.record.id;
  r.slot = plan.record.slot;
  r.tap = host_nic.is_object() ? host_nic.value("tap", "") : "";
  CommitAttach(&st, text, plan.record, plan.node_index, host_nic);
  ClearChange(dir);
  return r;
}

HotplugResult DetachDevice(const StateDir& state, const std::string& name, const std::string& device_file,
                           const HotplugOptions& opts) {
  Change c = BeginChange(state, name, Verb::kDetachDevice, device_file, opts.qmp_timeout);
  DomainSession& s = c.session;
  const fs::path& dir = c.dir;
  const RunningState& st = c.st;
  const domain::DeviceFragment& f = c.fragment;
  const qemu::RunningDomain running = c.running();
  std::optional<qemu::MemoryDetachPlan> memory;
  if (f.element == "memory") memory = qemu::PlanMemoryDetach(st.def, st.plan.value("memory_devices", json::array()), f);
  const qemu::DetachPlan plan = memory ? memory->detach : qemu::PlanDetach(running, f);

  // What the running element holds on the host: its image, its own socket.
  std::vector<std::string> files;
  std::string socket;
  for (const domain::Disk& d : st.def.devices.disks)
    if (d.line == plan.running_line && !d.source.empty()) files.push_back(d.source);
  // A listening socket qlaunch made (QEMU was given its fd): the XML's path, or the channel dir's.
  for (const domain::CharDev& c : st.def.devices.chardevs)
    if (c.line == plan.running_line && c.kind == "channel" && c.type == "unix" && c.mode == "bind" &&
        (!c.path.empty() || !c.target_name.empty()))
      socket = c.path.empty() ? (dir / "channel" / c.target_name).string() : c.path;
  json release = json::array();
  for (const qemu::QmpCall& c : plan.release) release.push_back(CallJson(c));
  // A cdrom whose medium change-media changed holds that medium's nodes, not the start's.
  std::string target;
  if (!f.devices.disks.empty()) {
    target = f.devices.disks[0].target_dev;
    const MediaNodes media = ReadMediaNodes(dir);
    if (auto it = media.nodes.find(target); it != media.nodes.end()) {
      release = json::array();
      for (const char* part : {"-format", "-storage"})
        if (!it->second.empty()) release.push_back({{"execute", "blockdev-del"}, {"arguments", {{"node-name", it->second + part}}}});
    }
  }

  const auto t0 = Clock::now();
  HotplugResult r;
  r.element = f.element;
  r.id = plan.id;
  json change = {{"op", "detach"}, {"id", plan.id}, {"release", release}, {"files", files}, {"socket", socket},
                 {"target", target}};
  if (memory)
    change["memory"] = {{"line", plan.running_line},
                        {"memdev", memory->memdev},
                        {"memory_bytes_after", domain::TotalMemoryBytes(st.def) - memory->size_bytes}};
  std::vector<json> pending = PendingDetaches(dir);
  const bool asked_before = std::any_of(pending.begin(), pending.end(), [&](const json& p) { return p.value("id", "") == plan.id; });
  if (!asked_before) {
    WriteChange(dir, change);
    try {
      s.qmp->Execute("device_del", {{"id", plan.id}}, opts.qmp_timeout);
    } catch (const std::exception& e) {
      ClearChange(dir);
      // QEMU 7.2 cannot unplug virtio-mem at all: its memory goes back by shrinking it.
      const bool virtio_mem = !f.devices.memory.empty() && f.devices.memory[0].model == "virtio-mem";
      throw std::runtime_error("detach-device " + name + ": QEMU refused to remove " + plan.id + ": " + e.what() +
                               UnchangedOrEnded(s, e, dir) +
                               (virtio_mem ? " (a virtio-mem device gives its memory back with update-memory-device " +
                                                 name + " --alias " + plan.id + " --requested-size 0)"
                                           : std::string()));
    }
  }
  const auto deadline = Clock::now() + opts.detach_wait;
  bool deleted = false;
  while (!deleted) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    std::optional<json> ev = s.qmp->NextEvent(left);
    if (!ev) break;
    deleted = ev->value("event", "") == "DEVICE_DELETED" &&
              ev->value("data", json::object()).value("device", "") == plan.id;
  }
  r.ms = MsSince(t0);
  if (!deleted && DeviceExists(*s.qmp, plan.id, opts.qmp_timeout)) {
    // The guest has not let go yet: it stays attached and recorded, its removal pending.
    if (!asked_before) {
      pending.push_back(change);
      SetPendingDetaches(dir, pending);
      ClearChange(dir);
    }
    r.released = false;
    return r;
  }
  FinishDetach(state, dir, *s.qmp, change, opts.qmp_timeout);
  std::erase_if(pending, [&](const json& p) { return p.value("id", "") == plan.id; });
  SetPendingDetaches(dir, pending);
  ClearChange(dir);
  return r;
}

}  // namespace qlaunch::launcher
