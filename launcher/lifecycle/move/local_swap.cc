#include "launcher/lifecycle/move/local_swap.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>

#include "domain/parser.h"
#include "launcher/host/device_host.h"
#include "launcher/host/qemu_memfds.h"
#include "launcher/host/qemu_spawn.h"
#include "launcher/host/qemu_mounts.h"
#include "launcher/host/qemu_user.h"
#include "launcher/host/qmp_listener.h"
#include "launcher/host/warm_pool.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/move/migration_poll.h"
#include "launcher/lifecycle/observe/domain_xml.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "launcher/lifecycle/start/incoming.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/migration_settings.h"
#include "launcher/lifecycle/start/start_plan.h"
#include "launcher/lifecycle/start/start_qmp.h"
#include "qemu_cmd/caps_probe.h"

namespace qlaunch::launcher {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The fds that keep the memfds open in this process (opened through /proc), closed at the end.
struct OwnedFds {
  std::map<std::string, int> by_backend;
  ~OwnedFds() {
    for (auto& [id, fd] : by_backend) ::close(fd);
  }
};

// qlaunch's memfds of domain `name` that QEMU `pid` holds, opened again by backend id.
void OpenQemuMemfds(pid_t pid, const std::string& name, OwnedFds* out) {
  for (const auto& [id, path] : QemuMemfds(pid, name)) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path.string() + " (" + id + "): " + std::strerror(errno));
    out->by_backend[id] = fd;
  }
}

// The warm pool files the domain's backends took (its records, warm_pool.h), opened again by
// backend id: they stay in use, the domain's, and go dirty only at its end.
void OpenWarmFiles(const fs::path& domain_dir, OwnedFds* out) {
  for (const auto& [id, path] : DomainWarmFiles(domain_dir)) {
    if (out->by_backend.count(id)) continue;
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path.string() + " (" + id + "): " + std::strerror(errno));
    out->by_backend[id] = fd;
  }
}

std::string Refused(const std::string& name, const std::string& why) {
  return "migrate --local: domain " + name + " " + why + "; the domain runs on as it is";
}

}  // namespace

LocalSwapReport SwapQemu(const StateDir& state, const LocalSwapOptions& o) {
  const auto begin = Clock::now();
  const std::chrono::milliseconds timeout = o.drive.qmp_timeout;
  LocalSwapReport r;
  r.name = o.name;
  StartInterrupt interrupt;
  // The new QEMU is planned from the live XML, as a migration destination is: every device at the
  // address the running QEMU has it. Planned from the running definition, a device attached since
  // (last in <devices>) took an earlier slot than the devices implied after it, and the new QEMU
  // could not load the old one's state (its own QMP session, closed before the one below).
  const std::string live_xml = LiveDomainXmlOf(state, o.name, Verb::kMigrate);
  DomainSession old = OpenDomainSession(state, o.name, Verb::kMigrate, timeout);
  RefuseIfDisksReleased("migrate --local", o.name,
                        old.qmp->Execute("query-status", nullptr, timeout).value("status", ""));
  r.old_pid = old.qemu.pid;
  const fs::path dir = state.DomainDir(o.name);
  std::error_code ec;
  if (fs::exists(dir / "events.sock", ec))
    throw std::runtime_error(Refused(o.name, "runs under `qlaunch run`, whose supervisor watches this QEMU"));

  // --- the new QEMU's plan: the live XML, qlaunch's memfds on the planned fds -------------------
  domain::DomainDef def = domain::ParseDomainXml(live_xml, RunningXmlPath(dir).string() + " (live)");
  // A log file (serial, console, channel) goes on in the same file: the new QEMU appends to what
  // the old one wrote instead of truncating it. The running XML is left as the user wrote it.
  for (domain::CharDev& c : def.devices.chardevs)
    if (c.type == "file") c.append = true;
  r.emulator = o.qemu.empty() ? fs::read_symlink("/proc/" + std::to_string(r.old_pid) + "/exe", ec).string() : o.qemu;
  if (r.emulator.empty()) throw std::runtime_error(Refused(o.name, "runs a QEMU whose binary cannot be read"));
  numa::HostTopology host = LoadHost("");
  qemu::QemuCaps caps = qemu::ProbeCaps(r.emulator);
  const QemuUser user = RecordedQemuUser(dir, def);  // the domain's uid, leased or named
  DeviceHostSide device_host(def, state.root(), user);  // decided, never made: refused if it has any
  const qemu::DeviceResources& res = device_host.resources();
  bool host_side = !res.chardev_fds.empty() || !res.graphics_ports.empty() || !res.nvram_path.empty();
  for (int fd : res.net_fds) host_side |= fd >= 0;
  if (host_side)
    throw std::runtime_error(Refused(o.name, "has devices qlaunch made on the host (taps, sockets, VNC/SPICE ports "
                                             "or UEFI vars), which its QEMU holds and a second one cannot share yet"));
  qemu::PlanOptions popts;
  popts.prealloc = qemu::PreallocMode::kLauncher;
  QmpListener listener;
  popts.qmp_socket = (dir / "qmp-swap.sock").string();
  popts.qmp_fd = listener.fd();
  popts.memory_backing_dir = (state.root() / ".ram" / def.name).string();
  popts.emulator = r.emulator;
  popts.incoming = true;
  OwnedFds memfds;  // opened before planning: the plan's fd numbers are the ones still free
  OpenQemuMemfds(r.old_pid, o.name, &memfds);
  OpenWarmFiles(dir, &memfds);
  const qemu::LaunchPlan plan = PlanStart(def, host, caps, &popts);
  FdReservation reservation(popts.first_launcher_fd, static_cast<int>(LauncherBackendCount(plan)));
  for (const qemu::MemoryBackend& b : plan.backends) {
    const bool launcher = b.prealloc == qemu::PreallocBy::kLauncher;
    const auto it = memfds.by_backend.find(b.id);
    if (launcher && it != memfds.by_backend.end()) {
      reservation.Place(b.launcher_fd, it->second);
      r.handed_over_bytes += b.size_bytes;
    } else if (b.shared || launcher) {
      throw std::runtime_error(Refused(o.name, "has shared memory backend " + b.id +
                                                   " that is not one of qlaunch's memfds or warm files (QEMU made it: its memory "
                                                   "cannot be handed over; start with --prealloc auto or launcher)"));
    }
  }

  // --- spawn it as a destination; it joins the domain's cgroup --------------------------------
  listener.Listen(dir / "qmp-swap.sock");
  struct RemoveSwapSocket {
    fs::path p;
    ~RemoveSwapSocket() {
      std::error_code e;
      fs::remove(p, e);
    }
  } remove_swap_socket{dir / "qmp-swap.sock"};
  SpawnSpec spec;
  spec.argv = plan.argv;
  spec.log_file = dir / "qemu.log";
  spec.inherit_fds = reservation.fds();
  spec.inherit_fds.push_back(listener.fd());
  if (user.change) spec.drop = DropTo{user.uid, user.gid, user.groups};
  const std::optional<MountNamespacePlan> mounts = QemuMountsFor(def, plan.argv, dir);  // as start gives it
  if (mounts) spec.mounts = &*mounts;
  int cgroup_fd = -1;
  if (auto cg = ReadSmallFile(dir / "cgroup")) {
    while (!cg->empty() && cg->back() == '\n') cg->pop_back();
    cgroup_fd = ::open(cg->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  spec.cgroup_fd = cgroup_fd;
  std::unique_ptr<QemuProcess> fresh;
  try {
    fresh = QemuProcess::Spawn(spec);
  } catch (...) {
    if (cgroup_fd >= 0) ::close(cgroup_fd);
    throw;
  }
  if (cgroup_fd >= 0) ::close(cgroup_fd);
  listener.Close();
  reservation.Close();
  r.new_pid = fresh->pid();
  std::unique_ptr<qemu::QmpClient> qmp;
  std::string uri;
  try {
    qmp = ConnectQmp(dir / "qmp-swap.sock", timeout, PreallocAllowance(QemuPreallocBytes(plan)));
    qmp->Execute("qmp_capabilities", nullptr, timeout + PreallocAllowance(QemuPreallocBytes(plan)));
    BeforeCont(*qmp, plan, timeout);
    MigrationUri local;
    local.kind = MigrationUri::Kind::kTcp;
    local.host = "127.0.0.1";
    uri = ListenIncoming(*qmp, local, /*ignore_shared=*/true, timeout);
  } catch (const std::exception& e) {
    const auto exit = fresh->ExitDescription();
    throw std::runtime_error(Refused(o.name, std::string("could not get a new QEMU ready: ") + e.what() +
                                                 (exit ? " (QEMU " + *exit + "; " + LogTail(dir / "qemu.log", 5) + ")" : "")));
  }
  r.ready_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();

  // --- migrate without the shared memory; the new QEMU runs the guest as the old one did -------
  MigratingMark mark(dir);
  DriveOptions drive = o.drive;
  drive.ignore_shared = true;
  const std::string was = old.qmp->Execute("query-status", nullptr, timeout).value("status", "");
  SourceMigrationSettings settings(*old.qmp, SettingsOf(drive), timeout);
  r.drive = DriveMigration(*old.qmp, o.name, uri, drive, interrupt);
  // Completed means the new QEMU has loaded the guest (the return path); it must also say so,
  // running or paused as the old one was, before the old one goes. Else the old QEMU, paused at
  // the switch-over with every page and device, takes the guest back.
  std::string now;
  for (int i = 0; i < 500; ++i) {
    try {
      now = qmp->Execute("query-status", nullptr, timeout).value("status", "");
    } catch (const std::exception& e) {
      now = std::string("gone (") + e.what() + ")";
      break;
    }
    if (now != "inmigrate") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (now != (was == "running" ? "running" : "paused")) {
    fresh->Kill();  // before the old QEMU runs the guest again on the memory they share
    if (was == "running") old.qmp->Execute("cont", nullptr, timeout);
    throw std::runtime_error(Refused(o.name, "was not taken over: the new QEMU says " + now + ", not " +
                                                 (was == "running" ? "running" : "paused") + " (" +
                                                 LogTail(dir / "qemu.log", 5) + ")"));
  }
  // The new QEMU keeps the guest; x-ignore-shared, set for this handover only, goes off again (a
  // save or migration from it must carry the RAM).
  {
    MigrationSettings plain;
    try {
      qmp->Execute("migrate-set-capabilities", {{"capabilities", MigrationCapabilities(plain)}}, timeout);
    } catch (const qemu::QmpError& e) {
      std::fprintf(stderr, "qlaunch: warning: migrate --local: x-ignore-shared stays on in the new QEMU: %s\n",
                   e.what());
    }
  }
  settings.Release();

  // --- the domain is the new QEMU's from here on ------------------------------------------------
  state.WithLock([&] {
    // The device records name elements of the running definition by line, which the live XML's
    // lines are not: they stay as they were (the devices are the same).
    json plan_json = qemu::ToJson(plan);
    const json was = json::parse(ReadSmallFile(dir / "plan.json").value_or("{}"), nullptr, false);
    for (const char* k : {"devices", "memory_devices", "node_index"})
      if (was.is_object() && was.contains(k)) plan_json[k] = was[k];
    AtomicWrite(dir / "plan.json", plan_json.dump(2) + "\n");
    fs::rename(dir / "qmp-swap.sock", dir / "qmp.sock");
    AtomicWrite(dir / "pid.start", std::to_string(fresh->ref().start_time) + "\n");
    AtomicWrite(dir / "pid", std::to_string(fresh->pid()) + "\n");
  });
  fresh->Detach();
  try {
    old.qmp->Execute("quit", nullptr, timeout);
  } catch (const qemu::QmpError&) {  // it went; or does not answer: then SIGKILL below
  }
  old.qmp.reset();
  for (int i = 0; i < 500 && ProcessAlive(old.qemu); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (ProcessAlive(old.qemu)) ::kill(old.qemu.pid, SIGKILL);
  r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  return r;
}

json ToJson(const LocalSwapReport& r) {
  json j{{"name", r.name},
         {"local", true},
         {"status", "completed"},
         {"emulator", r.emulator},
         {"old_pid", r.old_pid},
         {"new_pid", r.new_pid},
         {"handed_over_bytes", r.handed_over_bytes},
         {"ready_ms", r.ready_ms},
         {"wall_ms", r.wall_ms}};
  j.update(ToJson(r.drive));
  return j;
}

}  // namespace qlaunch::launcher
