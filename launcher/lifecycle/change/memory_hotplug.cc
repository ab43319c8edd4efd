#include "launcher/lifecycle/change/memory_hotplug.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "launcher/host/pool_lock.h"
#include "launcher/host/pool_reserved.h"
#include "launcher/host/qemu_memfds.h"
#include "launcher/host/warm_pool.h"
#include "launcher/lifecycle/start/warm_claims.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/preflight.h"
#include "launcher/lifecycle/start/start_memory.h"
#include "prealloc/preallocator.h"
#include "qemu_cmd/memory_hotplug_plan.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// The uid and gid QEMU runs as (its /proc entry's owner): a warm file is given to it.
std::optional<std::pair<uid_t, gid_t>> QemuOwner(const fs::path& dir) {
  const std::optional<ProcessRef> qemu = ReadProcessRef(dir / "pid", dir / "pid.start");
  struct stat st {};
  if (!qemu || ::stat(("/proc/" + std::to_string(qemu->pid)).c_str(), &st) != 0) return std::nullopt;
  return std::pair<uid_t, gid_t>{st.st_uid, st.st_gid};
}

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

void Quietly(qemu::QmpClient& qmp, const std::string& cmd, const json& args, std::chrono::milliseconds timeout) {
  try {
    qmp.Execute(cmd, args, timeout);
  } catch (const std::exception&) {
  }
}

}  // namespace

HotplugResult AttachMemoryDevice(const std::string& name, DomainSession& s, RunningState& st,
                                 const domain::DeviceFragment& f, const HotplugOptions& opts) {
  const json argv = st.plan.value("argv", json::array());
  if (argv.empty() || !argv[0].is_string()) throw std::runtime_error(st.dir.string() + "/plan.json names no emulator");
  const qemu::QemuCaps caps = LoadCaps(argv[0].get<std::string>());
  numa::HostTopology host = LoadHost("");
  const qemu::MemoryAttachPlan plan =
      qemu::PlanMemoryAttach({&st.def, st.records, st.node_index, ""}, st.plan.value("memory_devices", json::array()), f,
                             host, caps);
  const std::string where = "attach-device " + name + ": " + plan.device.id;

  // The pool: the pages must be free now, and stay ours while they are taken.
  // A warm file of the pool (warm_claims.h) serves the DIMM's memory when one matches: nothing to
  // fill, and the pre-flight counts it as available.
  std::optional<HugepagePoolLock> lock;
  std::optional<HeldFile> warm;
  const fs::path warm_record = st.dir / ("pool." + plan.backend.id);
  if (!plan.pool_needs.empty()) {
    lock.emplace();
    host = LoadHost("");
    const std::map<uint64_t, uint64_t> reserved = ReadReservedHugepagesConsistently(&host);
    if (plan.backend.prealloc == qemu::PreallocBy::kLauncher) warm = ClaimWarmFile(plan.backend, host, QemuOwner(st.dir));
    const std::vector<Diagnostic> problems =
        CheckHugepagePools(warm ? std::vector<qemu::LaunchPlan::PoolNeed>{} : plan.pool_needs, host, reserved);
    if (!problems.empty()) throw std::runtime_error(where + ": " + problems.front().message + "; the domain is unchanged");
  }
  if (warm) AtomicWrite(warm_record, WarmRecordLine(warm->path, plan.backend.id));  // the domain's end (or the detach) makes it dirty
  auto release_warm = [&] {  // QEMU may have seen it: dirty, scrubbed in the background
    if (!warm) return;
    warm.reset();
    ReleaseDomainWarmFiles(warm_record);
    std::error_code ec;
    fs::remove(warm_record, ec);
  };

  HotplugResult r;
  r.element = f.element;
  r.id = plan.device.id;
  r.prealloc = qemu::ToString(plan.backend.prealloc);

  // qlaunch's own fill, before QEMU sees anything.
  std::optional<prealloc::PreallocatedRegion> filled;
  if (warm) {
    r.prealloc = "warm";
  } else if (plan.backend.prealloc == qemu::PreallocBy::kLauncher) {
    const prealloc::RegionSpec spec = LauncherRegion(plan.backend, name, host);
    const auto t0 = Clock::now();
    prealloc::PreallocResult res = prealloc::Preallocate(std::span(&spec, 1));
    r.fill_ms = MsSince(t0);
    filled = std::move(res.regions.at(0));
    r.fill_threads = filled->result.threads;
    r.fill_cpus = filled->result.cpus;
    r.fill_observed_cpus = filled->result.observed_cpus;
  }

  // The journal (change.json): a qlaunch killed from here on is finished or undone by the next
  // attach-device or detach-device, as QEMU then has the device or not.
  json undo = json::array();
  if (plan.context) undo.push_back({{"execute", "object-del"}, {"arguments", {{"id", plan.context->id}}}});
  undo.push_back({{"execute", "object-del"}, {"arguments", {{"id", plan.backend.id}}}});
  json change = {{"op", "attach"}, {"id", plan.device.id}, {"xml", f.text}, {"record", qemu::ToJson(plan.record)},
                 {"node_index", st.node_index}, {"host_nic", json()}, {"undo", undo},
                 {"memory", {{"backend", plan.BackendJson()}, {"device", plan.DeviceJson()},
                             {"memory_bytes_after", plan.memory_bytes_after}}}};
  WriteChange(st.dir, change);

  const auto t0 = Clock::now();
  std::optional<int64_t> fdset;
  bool context_added = false, backend_added = false;
  try {
    int qemu_fd = -1;
    if (filled || warm) {
      const json added =
          s.qmp->ExecuteWithFd("add-fd", json::object(), warm ? warm->fd.get() : filled->memfd.fd(), opts.qmp_timeout);
      fdset = added.at("fdset-id").get<int64_t>();
      qemu_fd = added.at("fd").get<int>();
      change["undo"].push_back({{"execute", "remove-fd"}, {"arguments", {{"fdset-id", *fdset}}}});
      WriteChange(st.dir, change);
    }
    if (plan.context) {
      s.qmp->Execute("object-add", plan.ContextAdd(caps), opts.qmp_timeout);
      context_added = true;
    }
    const auto object_t0 = Clock::now();
    s.qmp->Execute("object-add", plan.ObjectAdd(caps, qemu_fd), opts.qmp_timeout);
    if (plan.backend.prealloc == qemu::PreallocBy::kQemu) r.fill_ms = MsSince(object_t0);
    backend_added = true;
    if (context_added) Quietly(*s.qmp, "object-del", {{"id", plan.context->id}}, opts.qmp_timeout);
    context_added = false;
    // QEMU opened the memfd again through /proc/self/fd: its copy in the fd set can go.
    if (fdset) Quietly(*s.qmp, "remove-fd", {{"fdset-id", *fdset}}, opts.qmp_timeout);
    fdset.reset();
    s.qmp->Execute("device_add", plan.DeviceAdd(), opts.qmp_timeout);
  } catch (const std::exception& e) {
    if (backend_added) Quietly(*s.qmp, "object-del", {{"id", plan.backend.id}}, opts.qmp_timeout);
    if (context_added) Quietly(*s.qmp, "object-del", {{"id", plan.context->id}}, opts.qmp_timeout);
    if (fdset) Quietly(*s.qmp, "remove-fd", {{"fdset-id", *fdset}}, opts.qmp_timeout);
    release_warm();
    ClearChange(st.dir);
    throw std::runtime_error(where + ": QEMU refused the <memory> in " + f.file + ": " + e.what() +
                             UnchangedOrEnded(s, e, st.dir));
  }
  r.ms = MsSince(t0);
  r.slot = plan.record.slot;
  filled.reset();  // QEMU holds the pages now
  warm.reset();
  CommitAttach(&st, f.text, plan.record, st.node_index, json());
  CommitMemoryDevices(&st, plan.BackendJson(), plan.DeviceJson(), "", "", plan.memory_bytes_after);
  ClearChange(st.dir);
  return r;
}

void FinishMemoryDetach(const fs::path& dir, RunningState* st, const std::string& id, const json& mem) {
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
  // One from the warm pool is dirty now, scrubbed once QEMU has let go of it.
  if (const std::string memdev = mem.value("memdev", ""); !memdev.empty())
    if (std::error_code ec; fs::exists(dir / ("pool." + memdev), ec)) {
      ReleaseDomainWarmFiles(dir / ("pool." + memdev));
      fs::remove(dir / ("pool." + memdev), ec);
    }
  CommitDetach(st, "memory", mem.value("line", 0));
  CommitMemoryDevices(st, json(), json(), id, mem.value("memdev", ""), mem.value("memory_bytes_after", uint64_t{0}));
}

}  // namespace qlaunch::launcher
