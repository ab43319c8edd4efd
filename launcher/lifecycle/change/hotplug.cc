// attach-device and detach-device (hotplug.h). Over 400 lines for a reason: both verbs share the
// change journal's recovery (Recover, FinishDetach, the pending detaches) kept private here, so
// that no other file can finish or undo a change half-way; the memory devices' own side lives in
// memory_hotplug.cc.
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
#include "launcher/host/qemu_memfds.h"
#include "launcher/host/qemu_user.h"
#include "launcher/host/state_dir.h"
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

void RunQuietly(qemu::QmpClient& qmp, const json& call, std::chrono::milliseconds timeout) {
  if (!call.is_object() || call.value("execute", "").empty()) return;
  try {
    qmp.Execute(call["execute"], call.value("arguments", json()), timeout);
  } catch (const std::exception&) {
  }
}

bool DeviceExists(qemu::QmpClient& qmp, const std::string& id, std::chrono::milliseconds timeout) {
  for (const json& p : qmp.Execute("qom-list", {{"path", "/machine/peripheral"}}, timeout))
    if (p.value("name", "") == id) return true;
  return false;
}

std::string QemuUserName(const fs::path& dir) {
  std::string user = ReadSmallFile(dir / "user").value_or("");
  while (!user.empty() && (user.back() == '\n' || user.back() == ' ')) user.pop_back();
  return user;
}

// The files of the device QEMU opens by path, as the start gives them to QEMU's user.
std::vector<LabelTarget> DeviceLabelTargets(const domain::DeviceFragment& f) {
  domain::DomainDef one;
  one.file = f.file;
  one.devices.disks = f.devices.disks;
  return LabelTargets(one);
}

void GiveBack(const StateDir& state, const fs::path& dir, const std::vector<std::string>& files,
              const domain::DomainDef& still_running) {
  // What the domain still opens keeps its owner (read once: it opens qcow2 headers for their
  // backing chains).
  const std::vector<LabelTarget> in_use = LabelTargets(still_running);
  std::vector<std::string> give;
  for (const std::string& f : files)
    if (std::none_of(in_use.begin(), in_use.end(), [&](const LabelTarget& t) { return t.path == f; })) give.push_back(f);
  if (!give.empty()) state.WithLock([&] { RestoreLabelsOf(dir, give); });
}

// Removes a device QEMU no longer has from the state dir: its backends (already gone with it
// for most), its record and element, its image's owner, its socket.
void FinishDetach(const StateDir& state, const fs::path& dir, qemu::QmpClient& qmp, const json& change,
                  std::chrono::milliseconds timeout) {
  for (const json& c : change.value("release", json::array())) RunQuietly(qmp, c, timeout);
  RunningState st = LoadRunningState(dir);
  const std::string id = change.value("id", "");
  if (const json mem = change.value("memory", json()); mem.is_object()) {
    // A memory device: its element by line (a DIMM of the start has no element in its record),
    // its backend and device in plan.json, and <memory> without it.
    // A DIMM QEMU was started with keeps its inherited memfd open after object-del: its pages
    // go back to the pool here (the fd set of one attached at run time was closed already).
    if (const std::string memdev = mem.value("memdev", ""); !memdev.empty())
      if (const std::optional<ProcessRef> qemu = ReadProcessRef(dir / "pid", dir / "pid.start")) try {
          ReleaseUnmappedMemfd(qemu->pid, dir.filename().string(), memdev);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "qlaunch: warning: %s: the memory of %s stays held until QEMU ends: %s\n",
                       dir.filename().c_str(), id.c_str(), e.what());
        }
    CommitDetach(&st, "memory", mem.value("line", 0));
    CommitMemoryDevices(&st, json(), json(), id, mem.value("memdev", ""), mem.value("memory_bytes_after", uint64_t{0}));
  } else {
    for (const qemu::DeviceRecord& r : st.records)
      if (r.id == id) {
        CommitDetach(&st, r.element, r.line);
        break;
      }
  }
  GiveBack(state, dir, change.value("files", std::vector<std::string>{}), st.def);
  if (const std::string socket = change.value("socket", ""); !socket.empty()) ::unlink(socket.c_str());
  if (const std::string target = change.value("target", ""); !target.empty()) ForgetMedia(dir, target);
}

// A change-media cut short: QEMU's drive holds the new medium (record it, give the old one
// back) or not (remove the new nodes, give the new image back).
void RecoverMedia(const StateDir& state, const fs::path& dir, qemu::QmpClient& qmp, const json& ch,
                  std::chrono::milliseconds timeout) {
  std::string node_now;
  for (const json& b : qmp.Execute("query-block", nullptr, timeout))
    if (b.value("qdev", "") == ch.value("id", "") && b.contains("inserted")) {
      node_now = b["inserted"].value("node-name", "");
      if (node_now.ends_with("-format")) node_now.resize(node_now.size() - 7);
    }
  const std::string node = ch.value("node", "");
  const RunningState st = LoadRunningState(dir);
  if (node_now == node) {
    RecordMediaChange(dir, ch.value("target", ""), ch.value("type", "file"), ch.value("source", ""), node,
                      ch.value("next_node_index", 0u));
    if (const std::string old = ch.value("old_source", ""); !old.empty() && old != ch.value("source", ""))
      GiveBack(state, dir, {old}, LoadRunningState(dir).def);
  } else {
    if (!node.empty())
      for (const char* part : {"-format", "-storage"})
        RunQuietly(qmp, {{"execute", "blockdev-del"}, {"arguments", {{"node-name", node + part}}}}, timeout);
    if (ch.value("relabelled", false)) GiveBack(state, dir, {ch.value("source", "")}, st.def);
  }
}

// What a killed qlaunch left in change.json, finished or undone as QEMU now has it; and the
// detaches the guest has completed since detach-device stopped waiting.
void Recover(const StateDir& state, const fs::path& dir, qemu::QmpClient& qmp, std::chrono::milliseconds timeout) {
  std::vector<json> pending = PendingDetaches(dir);
  if (std::optional<json> ch = ReadChange(dir)) {
    const std::string id = ch->value("id", "");
    const bool exists = !id.empty() && DeviceExists(qmp, id, timeout);
    if (ch->value("op", "") == "attach") {
      RunningState st = LoadRunningState(dir);
      if (exists) {
        CommitAttach(&st, ch->value("xml", ""), qemu::DeviceRecordFromJson(ch->value("record", json::object())),
                     ch->value("node_index", st.node_index), ch->value("host_nic", json()));
        if (const json mem = ch->value("memory", json()); mem.is_object())
          CommitMemoryDevices(&st, mem.value("backend", json()), mem.value("device", json()), "", "",
                              mem.value("memory_bytes_after", uint64_t{0}));
      } else {
        const json undo = ch->value("undo", json::array());
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) RunQuietly(qmp, *it, timeout);
        GiveBack(state, dir, ch->value("files", std::vector<std::string>{}), st.def);
        if (const std::string socket = ch->value("socket", ""); !socket.empty()) ::unlink(socket.c_str());
      }
    } else if (ch->value("op", "") == "detach") {
      pending.push_back(*ch);  // asked of QEMU or not: settled below by whether the device exists
    } else if (ch->value("op", "") == "media") {
      RecoverMedia(state, dir, qmp, *ch, timeout);
    }
    ClearChange(dir);
  }
  std::vector<json> still;
  for (const json& p : pending) {
    if (DeviceExists(qmp, p.value("id", ""), timeout)) {
      still.push_back(p);
    } else {
      FinishDetach(state, dir, qmp, p, timeout);
    }
  }
  SetPendingDetaches(dir, still);
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

void RecoverChanges(const StateDir& state, const std::string& name, qemu::QmpClient& qmp,
                    std::chrono::milliseconds timeout) {
  Recover(state, state.DomainDir(name), qmp, timeout);
}

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
  Recover(state, c.dir, *c.session.qmp, timeout);
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
  const QemuUser user = ResolveQemuUser(QemuUserName(dir), st.def);

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
