// StartDomain (start.h) as the sequence of a start, each step a call into the file or room that
// owns it, each phase timed (Timings::Mark):
//   inputs      lifecycle/start/inputs.h (domain, host, caps), host/qemu_user.h    parse, topology, probe
//               (the host read on a thread beside the parse and the user lookup)
//   plan        start_plan.h (PlanStart: the planner, launcher fds free here)  plan
//   pre-flight  start_checks.h (RefuseIfRunning, CheckHostForPlan), host/pool_lock.h
//   host side   host/state_dir.h (the claim), host/file_labels.h, host/cgroup.h,
//               start_memory.h (mem-path dirs), host/device_host.h          preflight
//   memory      start_memory.h (LauncherMemory: memfds, workers)
//   spawn       host/qemu_spawn.h                                           spawn
//   QMP         start_qmp.h (ConnectQmp, then qmp_capabilities)             qmp_ready, prealloc
//   cont        start_qmp.h (BeforeCont, WaitRunning); qlaunch's unmap         unmap, cont
// and how it fails: start_failure.h (FaultPoint, FailureMessage).
#include "launcher/lifecycle/start/start.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "domain/memory_totals.h"
#include "launcher/host/cgroup.h"
#include "launcher/host/device_host.h"
#include "launcher/host/file_labels.h"
#include "launcher/host/pool_lock.h"
#include "launcher/host/pool_reserved.h"
#include "launcher/host/qemu_mounts.h"
#include "launcher/host/qemu_spawn.h"
#include "launcher/host/qemu_user.h"
#include "launcher/host/qmp_listener.h"
#include "launcher/host/state_dir.h"
#include "launcher/host/uid_lease.h"
#include "launcher/lifecycle/start/incoming.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/migration_uri.h"
#include "launcher/lifecycle/start/preflight.h"
#include "launcher/lifecycle/start/run_early.h"
#include "launcher/lifecycle/start/start_affinity.h"
#include "launcher/lifecycle/start/start_checks.h"
#include "launcher/lifecycle/start/start_failure.h"
#include "launcher/lifecycle/start/start_interrupt.h"
#include "launcher/lifecycle/start/start_memory.h"
#include "launcher/lifecycle/start/start_plan.h"
#include "launcher/lifecycle/start/start_qemu_progress.h"
#include "launcher/lifecycle/start/start_qmp.h"
#include "launcher/lifecycle/start/warm_claims.h"
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

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// DOMAIN.xml "-": the XML from stdin (as `migrate ssh://` sends it), read once.
std::string ReadStdin() {
  std::ostringstream ss;
  ss << std::cin.rdbuf();
  if (ss.str().empty()) throw std::runtime_error("<stdin>: no domain XML on standard input");
  return ss.str();
}

}  // namespace

StartReport StartDomain(const StartOptions& opts) {
  StartReport report;
  Timings& t = report.timings;
  const milliseconds qmp_timeout = opts.qmp_timeout.count() > 0 ? opts.qmp_timeout : QmpTimeoutFromEnv();
  // From here on SIGINT/SIGTERM only set a flag (checked before anything is created), so a
  // signal during the capability probe cannot leave the probing QEMU behind.
  StartInterrupt interrupt;
  t.Mark(Phase::kCli);  // everything from qlaunch's first initialiser until here
  std::optional<MigrationUri> incoming;
  if (opts.incoming_fd >= 0) {
    incoming.emplace();
    incoming->kind = MigrationUri::Kind::kFd;
    incoming->path = "qlaunch-restore";
  } else if (!opts.incoming.empty()) {
    incoming = ParseMigrationUri(opts.incoming, UriUse::kIncoming, fs::current_path().string());
  }
  if (incoming && opts.run_early)
    throw std::invalid_argument("--run-early and --incoming exclude each other: an incoming guest runs when its "
                                "migration is in");

  // --- inputs: nothing on the host changes until pre-flight has passed ---------------------
  // The host is read on a thread of its own, beside the parse and the QEMU user's lookup (NSS,
  // about 0.6 ms with libnss_systemd): both CPUs are idle until QEMU is spawned, and the two took
  // 1.5 ms one after the other. A bad XML is still reported first: get() comes after the parse.
  std::future<numa::HostTopology> host_read = std::async(std::launch::async, LoadHost, opts.sysfs);
  std::optional<std::string> xml_text = opts.domain_xml_text;
  if (!xml_text && opts.domain_xml == "-") xml_text = ReadStdin();
  domain::DomainDef def =
      xml_text ? LoadDomainText(*xml_text, opts.domain_xml == "-" ? "<stdin>" : opts.domain_xml)
               : LoadDomain(opts.domain_xml);
  report.name = def.name;
  report.lifecycle = def.lifecycle;
  CheckDomainName(def.name);
  QemuUser qemu_user = ResolveQemuUser(opts.user, def);  // a leased one gets its ids in the pre-flight
  StateDir state(opts.state_root.empty() ? DefaultStateRoot() : opts.state_root);
  const fs::path dir = state.DomainDir(def.name);
  // A start of this name killed outright (SIGKILL: no handler ran) left its entry and a paused
  // QEMU holding the guest's memory. Clear that first, so the host is read without it.
  if (std::error_code ec; fs::exists(dir, ec)) state.WithLock([&] { state.RemoveIfStale(def.name); });
  t.Mark(Phase::kParse);

  numa::HostTopology host = host_read.get();
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
  popts.incoming = incoming.has_value();
  qemu::LaunchPlan plan = PlanStart(def, host, caps, &popts);
  // The launcher memfds' fd numbers are in the argv, free here: hold them at once so nothing
  // opened later takes them.
  const int launcher_fds = static_cast<int>(LauncherBackendCount(plan));
  FdReservation fd_reservation(popts.first_launcher_fd, launcher_fds);
  report.prealloc = PreallocSummary(plan);
  report.run_early = opts.run_early;
  t.Mark(Phase::kPlan);

  // --- pre-flight ---------------------------------------------------------------------------
  RefuseIfRunning(state, def.name);
  LeaseQemuUser(&qemu_user, def, dir);  // held from here; the claim's dir holds it once it names it
  struct LeaseGuard {
    const fs::path& dir;
    bool on;
    ~LeaseGuard() {
      if (on) ReleaseIds(dir);
    }
  } lease_guard{dir, qemu_user.lease};
  report.user = qemu_user.user + ":" + qemu_user.group;
  if (!qemu_user.lease) WarnSharedUser(state, def.name, report.user);
  // Held from reading the free pages until this start's pages are reserved (pool_lock.h).
  // The count is free minus reserved-but-not-faulted (host/pool_reserved.h); where the kernel
  // cannot tell that per node, the lock stays until this start's pages are faulted in.
  std::optional<HugepagePoolLock> pool_lock;
  WarmClaims warm;
  std::map<uint64_t, uint64_t> reserved_pages;
  bool release_pool_when_mapped = true;
  if (!plan.pool_needs.empty()) {
    t.Mark(Phase::kPreflight);
    pool_lock.emplace([&interrupt] { interrupt.ThrowIfInterrupted(); });
    numa::RereadHugepagePools(&host);  // the free pages now: another start may have taken some since
    reserved_pages = ReadReservedHugepagesConsistently(&host);
    release_pool_when_mapped = ReservedCountIsExactPerNode(plan.pool_needs, host);
    // Warm files of the pool (warm_claims.h) hold their pages already: only the rest is counted.
    if (launcher_fds > 0) {
      warm = WarmClaims::Take(plan, host, qemu_user);
      warm.SubtractFromNeeds(&plan.pool_needs);
    }
    t.Mark(Phase::kPoolLock);
  }
  report.memory_sources = MemorySources(plan, warm.Sources());
  CheckHostForPlan(def, plan, host, reserved_pages, qemu_user, opts.run_early);

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
  if (qemu_user.lease) {
    WriteDomainLease(dir, {qemu_user.uid, qemu_user.gid, {}});
    SettleHolds(dir);
  }
  if (!warm.empty()) {  // from here on the domain's end makes them dirty (RemoveDomainDir)
    claim->WriteFile("pool", warm.Record());
    warm.Commit();
  }
  qmp_listener.Listen(dir / "qmp.sock");
  if (events_listener) events_listener->Listen(dir / "events.sock");
  state.WithLock([&] { RelabelForQemu(LabelTargets(def), qemu_user, dir, &qemu_user.groups); });
  std::optional<DomainCgroup> cgroup = DomainCgroup::Create(def.name, PlanCgroupCpuset(def, plan), &report.notes);
  if (cgroup) claim->WriteFile("cgroup", cgroup->dir().string() + "\n");
  claim->WriteFile("domain.xml", xml_text ? *xml_text : ReadWholeFile(opts.domain_xml));
  claim->WriteFile("plan.json", qemu::ToJson(plan).dump(2) + "\n");
  MakeMemPathDirs(plan, host, popts.memory_backing_dir, qemu_user, &*claim);
  device_host.Create();
  if (const std::string nvram = device_host.Summary().value("nvram", std::string()); !nvram.empty()) {
    LabelTarget vars{nvram, /*write=*/true, /*create=*/false, {}};
    vars.where.file = def.file;
    vars.where.line = def.os.line;
    vars.where.element = "nvram";
    state.WithLock([&] { RelabelForQemu({vars}, qemu_user, dir, &qemu_user.groups); });
  }
  claim->WriteFile("devices.json", device_host.Summary().dump(2) + "\n");
  interrupt.ThrowIfInterrupted();
  FaultPoint("preflight", nullptr);
  t.Mark(Phase::kPreflight);

  IdSet narrowed;
  try {
    if (launcher_fds > 0) {
      memory = LauncherMemory::Create(plan, host, &warm);
      interrupt.OnInterrupt([&memory] { memory->Stop(); });
      for (auto [fd, target] : memory->Fds()) fd_reservation.Place(target, fd);
    }
    // Filling starts before QEMU is spawned, so the fork and QEMU's start-up overlap it. With
    // --run-early it starts once the guest runs instead (below): the workers would take the CPUs QEMU's
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
    t.Mark(Phase::kMemfd);

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
    if (cgroup) spec.cgroup_fd = cgroup->fd();
    // `run`: QEMU dies with its supervisor, however that ends, and a scheduler's SIGTERM/SIGINT to
    // the whole process tree reaches only qlaunch, which shuts the guest down (qemu_spawn.h).
    spec.die_with_parent = spec.block_stop_signals = opts.supervised;
    // A mount namespace of its own: a private /dev, a /proc that hides other users' processes.
    const std::optional<MountNamespacePlan> mounts = QemuMountsFor(def, plan.argv, dir);
    if (mounts) spec.mounts = &*mounts;
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
    // QEMU greets once its backends are mapped: its hugepages are reserved, so counted.
    if (release_pool_when_mapped) pool_lock.reset();
    FaultPoint("qmp", qemu_proc.get());
    t.Mark(Phase::kQmpReady);

    // The reply to qmp_capabilities comes once QEMU's start-up preallocation is done.
    qmp->Execute("qmp_capabilities", nullptr, qmp_timeout + allowance);
    if (qemu_progress) qemu_progress->Finish();
    if (!narrowed.Empty()) SetProcessAffinity(qemu_proc->pid(), host.usable_cpus);
    FaultPoint("prealloc", qemu_proc.get());
    // Without --run-early, qlaunch's mappings of the filled memory go while QEMU handles cont (the
    // munmap of 8 GiB takes about 2 ms); a destination keeps its order: unmap, then listen.
    const bool unmap_during_cont = memory && !opts.run_early && !incoming;
    if (!opts.run_early) {
      FinishLauncherMemory(memory.get(), progress_line.get(), interrupt, &t,
                           unmap_during_cont ? Unmap::kLater : Unmap::kNow);
      t.Reached(Timings::Moment::kPopulated);
      pool_lock.reset();  // every page is faulted in now
    }
    t.Mark(Phase::kPrealloc);

    BeforeCont(*qmp, plan, qmp_timeout);
    FaultPoint("cont", qemu_proc.get());
    if (incoming) {  // the cont phase of a destination: it listens; the guest runs once it is in
      report.incoming = ListenIncoming(*qmp, *incoming, opts.ignore_shared, qmp_timeout, opts.incoming_fd);
      claim->WriteFile("incoming", report.incoming + "\n");
      t.Mark(Phase::kCont);
    } else {
      qmp->ExecuteOverlapped("cont", nullptr, qmp_timeout, [&] {
        if (!unmap_during_cont) return;
        memory->Release();
        t.Mark(Phase::kUnmap);  // from the end of prealloc: the commands before cont, cont sent, the munmap
      });
      WaitRunning(*qmp, qmp_timeout);
      t.Mark(Phase::kCont);
      t.Reached(Timings::Moment::kRunning);
    }
    if (opts.run_early) {  // the guest runs; now the workers fill its memory behind it
      // Started only now: started before cont, on a host with few CPUs they took the CPUs that
      // qlaunch's QMP commands and QEMU's main loop needed for cont (8 GiB, 2 CPUs, TCG: running
      // came 100 ms and more later). The pages are reserved since the mapping, so the guest can
      // touch any of them meanwhile.
      start_filling();
      t.Mark(Phase::kMemfd);
      FaultPoint("running", qemu_proc.get());
      FinishLauncherMemory(memory.get(), progress_line.get(), interrupt, &t);
      t.Reached(Timings::Moment::kPopulated);
      pool_lock.reset();
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
  lease_guard.on = false;
  device_host.Keep();
  qemu_proc->Detach();
  report.pid = qemu_proc->pid();
  t.Mark(Phase::kHandOver);
  t.Finish();
  return report;
}

}  // namespace qlaunch::launcher
