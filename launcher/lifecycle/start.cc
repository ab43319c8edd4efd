#include "launcher/lifecycle/start.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "domain/memory_totals.h"
#include "launcher/host/cgroup.h"
#include "launcher/host/device_host.h"
#include "launcher/host/file_labels.h"
#include "launcher/lifecycle/inputs.h"
#include "launcher/host/pool_lock.h"
#include "launcher/lifecycle/preflight.h"
#include "launcher/host/qemu_spawn.h"
#include "launcher/host/qemu_user.h"
#include "launcher/host/qmp_listener.h"
#include "launcher/lifecycle/run_early.h"
#include "launcher/lifecycle/start_affinity.h"
#include "launcher/lifecycle/start_interrupt.h"
#include "launcher/lifecycle/start_memory.h"
#include "launcher/lifecycle/start_qemu_progress.h"
#include "launcher/host/state_dir.h"
#include "prealloc/progress_line.h"
#include "qemu_cmd/caps_probe.h"
#include "qemu_cmd/planner.h"
#include "qemu_cmd/qmp_client.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::chrono::milliseconds QmpTimeoutFromEnv() {
  const char* env = std::getenv("QLAUNCH_QMP_TIMEOUT_MS");
  if (env && *env) {
    char* end = nullptr;
    long long ms = std::strtoll(env, &end, 10);
    if (end && *end == '\0' && ms > 0) return milliseconds(ms);
    std::fprintf(stderr, "qlaunch: warning: ignoring QLAUNCH_QMP_TIMEOUT_MS=%s (not a positive integer)\n", env);
  }
  return std::chrono::seconds(30);
}

namespace {

// A bad emulator path is reported before probing, naming where the path came from.
void CheckEmulator(const std::string& emulator, const StartOptions& opts, const domain::DomainDef& def) {
  struct stat st {};
  std::string problem;
  if (::stat(emulator.c_str(), &st) != 0) problem = "does not exist";
  else if (!S_ISREG(st.st_mode)) problem = "is not a file";
  else if (::access(emulator.c_str(), X_OK) != 0) problem = "is not executable";
  if (problem.empty()) return;
  Diagnostic d;
  if (!opts.qemu.empty()) {
    d.message = "emulator " + emulator + " (given by --qemu) " + problem;
  } else if (!def.devices.emulator.empty()) {
    d.file = def.file;
    d.line = def.devices.emulator_line;
    d.element = "emulator";
    d.message = "emulator " + emulator + " " + problem + " (use --qemu PATH to choose another)";
  } else {
    d.message = "the default emulator " + emulator + " " + problem +
                " (install qemu-system-x86, or use --qemu PATH or <emulator> in the domain)";
  }
  throw DiagnosticError(d);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* PreallocSummary(const qemu::LaunchPlan& plan) {
  bool launcher = false, qemu_side = false;
  for (const auto& b : plan.backends) {
    launcher |= b.prealloc == qemu::PreallocBy::kLauncher;
    qemu_side |= b.prealloc == qemu::PreallocBy::kQemu;
  }
  return launcher ? "launcher" : qemu_side ? "qemu" : "none";
}

size_t LauncherBackendCount(const qemu::LaunchPlan& plan) {
  size_t n = 0;
  for (const auto& b : plan.backends) n += b.prealloc == qemu::PreallocBy::kLauncher;
  return n;
}

uint64_t QemuPreallocBytes(const qemu::LaunchPlan& plan) {
  uint64_t n = 0;
  for (const auto& b : plan.backends)
    if (b.prealloc == qemu::PreallocBy::kQemu) n += b.size_bytes;
  return n;
}

// How long QEMU may take to preallocate `bytes` itself: 2 ms per MiB (0.5 GB/s, a slow host).
milliseconds PreallocAllowance(uint64_t bytes) { return milliseconds((bytes >> 20) * 2); }

std::string TimeoutText(milliseconds qmp_timeout, milliseconds allowance) {
  std::string s = std::to_string((qmp_timeout + allowance).count()) + " ms (QLAUNCH_QMP_TIMEOUT_MS " +
                  std::to_string(qmp_timeout.count());
  if (allowance.count() > 0) s += " + " + std::to_string(allowance.count()) + " for QEMU's preallocation";
  return s + ")";
}

// Connects to the QMP socket qlaunch made (QEMU holds the listening end, so this needs no
// wait) and reads the greeting. QEMU preallocates while it creates the machine, before it
// greets, so the wait includes the preallocation allowance. A QEMU that dies, or is killed on
// an interrupt, resets the connection: the read fails at once, never by timing out.
std::unique_ptr<qemu::QmpClient> ConnectQmp(const fs::path& socket, milliseconds qmp_timeout, milliseconds allowance) {
  try {
    return qemu::QmpClient::Connect(socket.string(), qmp_timeout + allowance, /*wait_for_server=*/false);
  } catch (const qemu::QmpClosed&) {
    throw;  // QEMU went away: FailureMessage reports how it ended, with its log
  } catch (const qemu::QmpTimeout& e) {
    throw qemu::QmpTimeout(std::string(e.what()) + " (no QMP greeting within " + TimeoutText(qmp_timeout, allowance) +
                           ")");
  }
}

// Before cont: the plan's device state commands (set_link ...), then the thread-contexts.
// Thread-contexts only serve preallocation: once it is done, delete them so their idle threads
// go (libvirt does the object-del too). A backend's prealloc-context is a strong QOM link, so
// object-del alone leaves the object, and its thread, alive as long as a backend points at it:
// clear those links first. Failures are warnings; the guest runs either way.
void BeforeCont(qemu::QmpClient& qmp, const qemu::LaunchPlan& plan, milliseconds timeout) {
  for (const auto& c : plan.before_cont) qmp.Execute(c.execute, nlohmann::json::parse(c.arguments_json), timeout);
  auto attempt = [&](const std::string& what, const std::string& command, const nlohmann::json& args) {
    try {
      qmp.Execute(command, args, timeout);
    } catch (const qemu::QmpTimeout&) {
      throw;
    } catch (const qemu::QmpError& e) {
      std::fprintf(stderr, "qlaunch: warning: %s: %s\n", what.c_str(), e.what());
    }
  };
  for (const auto& b : plan.backends) {
    if (b.thread_context.empty()) continue;
    attempt("clearing prealloc-context of " + b.id, "qom-set",
            {{"path", "/objects/" + b.id}, {"property", "prealloc-context"}, {"value", ""}});
  }
  for (const auto& ctx : plan.contexts) attempt("object-del " + ctx.id, "object-del", {{"id", ctx.id}});
}

// <locked/> with an unprivileged QEMU: QEMU mlocks all guest memory, which it may only do within
// RLIMIT_MEMLOCK (root's QEMU has CAP_IPC_LOCK instead). The child raises the limit before it
// drops root; some hosts (containers) refuse that even to root. Find out here, on ourselves
// (raising qlaunch's own limit is harmless), and refuse before anything is created.
std::optional<Diagnostic> CheckMemlockLimit(const domain::DomainDef& def, const QemuUser& user) {
  if (!def.memory_backing.locked || !user.change) return std::nullopt;
  const rlim_t need = domain::TotalMemoryBytes(def) + (1ull << 30);
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_MEMLOCK, &lim) == 0 && (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= need)) return std::nullopt;
  struct rlimit want {need, need};
  if (::setrlimit(RLIMIT_MEMLOCK, &want) == 0) return std::nullopt;
  Diagnostic d;
  d.file = def.file;
  d.line = def.memory_backing.line;
  d.element = "memoryBacking";
  d.message = "<locked/>: QEMU's user " + user.user + " needs RLIMIT_MEMLOCK of " + std::to_string(need) +
              " bytes (guest memory + 1 GiB), and this host refuses to raise it (" + std::strerror(errno) +
              "; the hard limit is " + std::to_string(lim.rlim_max) +
              " bytes): raise the limit for qlaunch (e.g. LimitMEMLOCK= in its unit, or ulimit -l), or pass "
              "--user root to let QEMU lock memory as root";
  return d;
}

// Testing aid: $QLAUNCH_FAULT=<phase> makes the start fail at that point as if the real failure
// had happened there, so tests can check that every failure path leaves nothing behind. The
// QEMU, once spawned, is killed (SIGKILL, reaped) first; then the start throws and takes its
// ordinary failure path. Phases: preflight (state dir claimed, mem-path dirs made, nothing
// spawned), spawn (QEMU spawned, launcher memfds populating), qmp (QMP greeted), prealloc
// (QEMU's own preallocation done, the launcher's still running), cont (just before 'cont'),
// running (--run-early only: the guest runs, the launcher's population is still under way).
// Any other value fails the start at the first point.
void FaultPoint(const char* phase, QemuProcess* qemu_proc) {
  const char* fault = std::getenv("QLAUNCH_FAULT");
  if (!fault || !*fault) return;
  static constexpr const char* kPhases[] = {"preflight", "spawn", "qmp", "prealloc", "cont", "running"};
  bool known = false;
  for (const char* p : kPhases) known |= std::strcmp(fault, p) == 0;
  if (known && std::strcmp(fault, phase) != 0) return;
  if (qemu_proc) qemu_proc->Kill();
  throw std::runtime_error(known ? std::string("fault injected at phase ") + phase + " (QLAUNCH_FAULT)"
                                 : std::string("QLAUNCH_FAULT=") + fault +
                                       ": unknown phase (preflight, spawn, qmp, prealloc, cont or running)");
}

// After cont: query-status says running at once (QEMU resumes the vCPUs before it answers
// cont); should it not, wait for the RESUME event, then ask again. No polling sleeps.
void WaitRunning(qemu::QmpClient& qmp, milliseconds timeout) {
  auto status = [&] { return qmp.Execute("query-status", nullptr, timeout).value("status", std::string()); };
  std::string now = status();
  if (now == "running") return;
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    std::optional<nlohmann::json> ev = qmp.NextEvent(left);
    if (!ev) break;
    if (ev->value("event", "") == "RESUME") break;
  }
  if ((now = status()) == "running") return;
  throw std::runtime_error("QEMU did not start running after 'cont' (query-status says '" + now + "')");
}

// The launcher's population is done: wait for the workers (rethrowing their error), close our
// copies of the memfds, end the progress line.
void FinishLauncherMemory(LauncherMemory* memory, prealloc::ProgressLine* line, const StartInterrupt& interrupt) {
  if (memory) {
    memory->Wait();
    memory->Release();
  }
  if (line) line->Finish();
  interrupt.ThrowIfInterrupted();
}

// The message of a start that failed once QEMU was spawned: why QEMU ended (with its log), or
// that a signal stopped us, or the error itself.
std::string FailureMessage(const std::string& error, const std::string& name, const StartInterrupt& interrupt,
                           QemuProcess* qemu_proc, const fs::path& log) {
  if (int sig = interrupt.signal()) {
    return "start of domain " + name + " interrupted by " + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
           "; QEMU was killed and everything it held released";
  }
  if (qemu_proc) {
    // QEMU may be on its way out (the error is often the closed QMP socket): give it a moment.
    std::optional<std::string> ended;
    for (int i = 0; i < 50 && !(ended = qemu_proc->ExitDescription()); ++i)
      std::this_thread::sleep_for(milliseconds(10));
    if (ended) {
      std::string msg = "QEMU " + *ended + " while starting domain " + name + " (" + error + ")";
      std::string tail = LogTail(log);
      msg += tail.empty() ? "; " + log.string() + " is empty" : "; the end of " + log.string() + ":\n" + tail;
      return msg;
    }
  }
  return error;
}

}  // namespace

StartReport StartDomain(const StartOptions& opts) {
  StartReport report;
  Timings& t = report.timings;
  const milliseconds qmp_timeout = opts.qmp_timeout.count() > 0 ? opts.qmp_timeout : QmpTimeoutFromEnv();
  // From here on SIGINT/SIGTERM only set a flag (checked before anything is created), so a
  // signal during the capability probe cannot leave the probing QEMU behind.
  StartInterrupt interrupt;

  // --- inputs: nothing on the host changes until pre-flight has passed ---------------------
  domain::DomainDef def = LoadDomain(opts.domain_xml);
  report.name = def.name;
  CheckDomainName(def.name);
  const QemuUser qemu_user = ResolveQemuUser(opts.user, def);
  report.user = qemu_user.user + ":" + qemu_user.group;
  StateDir state(opts.state_root.empty() ? DefaultStateRoot() : opts.state_root);
  const fs::path dir = state.DomainDir(def.name);
  // A start of this name killed outright (SIGKILL: no handler ran) left its entry and a paused
  // QEMU holding the guest's memory. Clear that first, so the host is read without it.
  if (std::error_code ec; fs::exists(dir, ec)) state.WithLock([&] { state.RemoveIfStale(def.name); });
  t.Mark(Phase::kParse);

  numa::HostTopology host = LoadHost(opts.sysfs);
  t.Mark(Phase::kTopology);

  const std::string emulator = PickEmulator(opts.qemu, &def);
  CheckEmulator(emulator, opts, def);
  qemu::QemuCaps caps = qemu::ProbeCaps(emulator);
  interrupt.ThrowIfInterrupted();
  t.Mark(Phase::kProbe);

  DeviceHostSide device_host(def, state.root(), qemu_user);  // decided and checked; made after pre-flight
  qemu::PlanOptions popts;
  popts.devices = device_host.resources();
  popts.prealloc = opts.prealloc;
  QmpListener qmp_listener;  // its fd number goes into the argv
  popts.qmp_socket = (dir / "qmp.sock").string();
  popts.qmp_fd = qmp_listener.fd();
  std::optional<QmpListener> events_listener;  // `run`'s own monitor (events.sock)
  if (opts.supervised) popts.events_fd = events_listener.emplace().fd();
  // Outside the 0700 state dir, which QEMU's user cannot enter (".ram" is never a domain name).
  popts.memory_backing_dir = (state.root() / ".ram" / def.name).string();
  popts.emulator = emulator;
  popts.supervised = opts.supervised;
  qemu::LaunchPlan plan = qemu::PlanLaunch(def, host, caps, popts);
  // The launcher memfds' fd numbers are in the argv: make sure they are free here, and hold
  // them at once so nothing opened later takes them.
  const int launcher_fds = static_cast<int>(LauncherBackendCount(plan));
  if (launcher_fds > 0) {
    int first = FreeFdBlock(popts.first_launcher_fd, launcher_fds);
    if (first != popts.first_launcher_fd) {
      popts.first_launcher_fd = first;
      plan = qemu::PlanLaunch(def, host, caps, popts);
    }
  }
  FdReservation fd_reservation(popts.first_launcher_fd, launcher_fds);
  report.prealloc = PreallocSummary(plan);
  report.run_early = opts.run_early;
  t.Mark(Phase::kPlan);

  // --- pre-flight ---------------------------------------------------------------------------
  {
    DomainStatus st = state.Inspect(def.name);  // a clear refusal before the pool check
    if (fs::exists(dir) && st.kind != DomainStatus::Kind::kStale)
      throw AlreadyRunningError(def.name, st.qemu_alive ? st.qemu->pid : st.owner->pid,
                                st.kind == DomainStatus::Kind::kStarting && !st.qemu_alive);
  }
  // Held from reading the free pages until this start's pages are reserved (pool_lock.h).
  std::optional<HugepagePoolLock> pool_lock;
  if (!plan.pool_needs.empty()) {
    pool_lock.emplace([&interrupt] { interrupt.ThrowIfInterrupted(); });
    host = LoadHost(opts.sysfs);  // the free pages now: another start may have taken some since
  }
  std::vector<Diagnostic> problems = CheckAccelerator(def);
  if (auto d = CheckMemlockLimit(def, qemu_user)) problems.push_back(*d);
  if (opts.run_early)
    if (auto d = RunEarlyRefusal(plan, def)) problems.push_back(*d);
  if (problems.empty() && def.type == "kvm" && qemu_user.change) {
    if (int err = OpenErrorAs(qemu_user, "/dev/kvm", O_RDWR)) {
      Diagnostic d;
      d.message = "type='kvm': the QEMU user " + qemu_user.user + " cannot open /dev/kvm (" + std::strerror(err) +
                  "); add it to the group that owns /dev/kvm (kvm)";
      problems.push_back(d);
    }
  }
  for (auto& d : CheckHugepagePools(plan.pool_needs, host)) problems.push_back(std::move(d));
  if (!problems.empty()) {
    for (auto& d : problems)
      if (d.file.empty()) d.file = def.file;
    throw DiagnosticError(std::move(problems));
  }

  // --- side effects, each undone by its guard unless the start succeeds ---------------------
  // Destruction runs bottom-up: actions cleared, QMP closed, QEMU killed, memfds released,
  // fds closed, mem-path dirs + state dir removed, and last (above) signal handlers restored.
  std::optional<StateClaim> claim;
  std::unique_ptr<prealloc::ProgressLine> progress_line;  // outlives whoever updates it
  std::unique_ptr<LauncherMemory> memory;
  std::unique_ptr<QemuProcess> qemu_proc;
  std::unique_ptr<qemu::QmpClient> qmp;
  std::unique_ptr<QemuProgress> qemu_progress;
  struct ClearActions {
    StartInterrupt& i;
    ~ClearActions() { i.ClearActions(); }
  } clear_actions{interrupt};
  const fs::path log = dir / "qemu.log";

  claim.emplace(StateClaim::Acquire(state, def.name));
  claim->WriteFile("user", report.user + "\n");
  qmp_listener.Listen(dir / "qmp.sock");
  if (events_listener) events_listener->Listen(dir / "events.sock");
  state.WithLock([&] { RelabelForQemu(LabelTargets(def), qemu_user, dir); });
  std::optional<DomainCgroup> cgroup = DomainCgroup::Create(def.name, PlanCgroupCpuset(def, plan), &report.notes);
  if (cgroup) claim->WriteFile("cgroup", cgroup->dir().string() + "\n");
  claim->WriteFile("domain.xml", ReadWholeFile(opts.domain_xml));
  claim->WriteFile("plan.json", qemu::ToJson(plan).dump(2) + "\n");
  MakeMemPathDirs(plan, host, popts.memory_backing_dir, qemu_user, &*claim);
  device_host.Create();
  claim->WriteFile("devices.json", device_host.Summary().dump(2) + "\n");
  interrupt.ThrowIfInterrupted();
  FaultPoint("preflight", nullptr);
  t.Mark(Phase::kPreflight);

  IdSet narrowed;
  try {
    if (launcher_fds > 0) {
      memory = LauncherMemory::Create(plan, host);
      interrupt.OnInterrupt([&memory] { memory->Stop(); });
      for (auto [fd, target] : memory->Fds()) fd_reservation.Place(target, fd);
    }
    // Filling starts before QEMU is spawned, so the fork and QEMU's start-up overlap it. With
    // --run-early it starts once QEMU is ready instead: the workers would take the CPUs QEMU's
    // start-up needs, and the point of --run-early is a guest that runs as soon as possible.
    // (Workers that merely yield, at SCHED_IDLE, were tried: preempted while they hold the
    // memfd's locks, they hold QEMU's mmap of it up, and the guest ran later, not sooner.)
    auto start_filling = [&] {
      if (!memory) return;
      prealloc::ProgressFn fn;
      if (opts.progress) {
        progress_line = std::make_unique<prealloc::ProgressLine>(stderr);
        fn = [line = progress_line.get()](uint64_t done, uint64_t total) { line->Update(done, total); };
      }
      memory->StartPopulate(std::move(fn));
    };
    if (!opts.run_early) start_filling();
    interrupt.ThrowIfInterrupted();

    SpawnSpec spec;
    spec.argv = plan.argv;
    spec.log_file = log;
    spec.inherit_fds = fd_reservation.fds();
    spec.inherit_fds.push_back(qmp_listener.fd());
    if (events_listener) spec.inherit_fds.push_back(events_listener->fd());
    spec.inherit_fds.insert(spec.inherit_fds.end(), device_host.fds().begin(), device_host.fds().end());
    spec.affinity = narrowed = PreallocAffinity(plan, caps, host);
    if (qemu_user.change) spec.drop = DropTo{qemu_user.uid, qemu_user.gid, qemu_user.groups};
    // <locked/>: QEMU mlocks all guest memory, which an unprivileged user may only do within
    // RLIMIT_MEMLOCK: the guest's size plus 1 GiB for QEMU itself, as libvirt sets it.
    // (Root's QEMU has CAP_IPC_LOCK and needs no limit.)
    if (def.memory_backing.locked && qemu_user.change)
      spec.memlock_bytes = domain::TotalMemoryBytes(def) + (1ull << 30);
    if (cgroup) spec.cgroup_procs_fd = cgroup->procs_fd();
    qemu_proc = QemuProcess::Spawn(spec);
    qmp_listener.Close();  // QEMU has it; if QEMU dies, our connection is reset at once
    device_host.HandedOver();
    if (events_listener) events_listener->Close();
    interrupt.OnInterrupt([&qemu_proc] { qemu_proc->SendKill(); });
    claim->RecordQemu(qemu_proc->ref());
    fd_reservation.Close();  // QEMU has its own copies now
    // QEMU preallocates during its start-up (7.2 before it even greets on QMP): show what its
    // process has resident meanwhile.
    const uint64_t qemu_bytes = QemuPreallocBytes(plan);
    if (opts.progress && qemu_bytes > 0 && !progress_line) {
      progress_line = std::make_unique<prealloc::ProgressLine>(stderr);
      qemu_progress = std::make_unique<QemuProgress>(qemu_proc->pid(), qemu_bytes, progress_line.get());
    }
    FaultPoint("spawn", qemu_proc.get());
    t.Mark(Phase::kSpawn);

    const milliseconds allowance = PreallocAllowance(qemu_bytes);
    qmp = ConnectQmp(dir / "qmp.sock", qmp_timeout, allowance);
    pool_lock.reset();  // QEMU greets once its backends are mapped: its hugepages are reserved
    FaultPoint("qmp", qemu_proc.get());
    t.Mark(Phase::kQmpReady);

    // The reply to qmp_capabilities comes once QEMU's start-up preallocation is done.
    qmp->Execute("qmp_capabilities", nullptr, qmp_timeout + allowance);
    if (opts.run_early) start_filling();
    if (qemu_progress) qemu_progress->Finish();
    if (!narrowed.Empty()) SetProcessAffinity(qemu_proc->pid(), host.usable_cpus);
    FaultPoint("prealloc", qemu_proc.get());
    if (!opts.run_early) {
      FinishLauncherMemory(memory.get(), progress_line.get(), interrupt);
      t.Reached(Timings::Moment::kPopulated);
    }
    t.Mark(Phase::kPrealloc);

    BeforeCont(*qmp, plan, qmp_timeout);
    FaultPoint("cont", qemu_proc.get());
    qmp->Execute("cont", nullptr, qmp_timeout);
    WaitRunning(*qmp, qmp_timeout);
    t.Mark(Phase::kCont);
    t.Reached(Timings::Moment::kRunning);
    if (opts.run_early) {  // the guest runs; the workers go on filling its memory
      FaultPoint("running", qemu_proc.get());
      FinishLauncherMemory(memory.get(), progress_line.get(), interrupt);
      t.Reached(Timings::Moment::kPopulated);
      t.Mark(Phase::kPrealloc);
    }
  } catch (const std::exception& e) {
    if (qemu_progress) qemu_progress->Finish();
    if (memory) {  // stop and join the workers (their error, if any, is not the news here)
      memory->Stop();
      try {
        memory->Wait();
      } catch (const std::exception&) {
      }
    }
    if (progress_line) progress_line->Finish();
    throw std::runtime_error(FailureMessage(e.what(), def.name, interrupt, qemu_proc.get(), log));
  }

  // --- success: QEMU stays, the state stays -----------------------------------------------
  interrupt.ClearActions();
  qmp.reset();
  claim->Commit();
  device_host.Keep();
  qemu_proc->Detach();
  report.pid = qemu_proc->pid();
  t.Finish();
  return report;
}

}  // namespace qlaunch::launcher
