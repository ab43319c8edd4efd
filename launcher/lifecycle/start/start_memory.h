// LauncherMemory: the launcher-populated backends of one start (PreallocBy::kLauncher), on the
// preallocator's two halves (prealloc::PreparedMemory, then Populate) so QEMU can be spawned
// between creating the memfds and populating them:
//   Create()         memfd + mapping + mbind per backend (a short hugepage pool fails here)
//   (spawn QEMU; it inherits the memfds at MemoryBackend::launcher_fd)
//   StartPopulate()  pinned workers fault the pages in, on a background thread
//   Wait()           joins; rethrows PreallocError / PreallocCancelled
//   Release()        unmaps and closes our copies: QEMU's fds keep the pages
// Destruction stops the workers (if running), joins them and releases everything.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "launcher/host/qemu_user.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/start/start_interrupt.h"
#include "launcher/lifecycle/start/timings.h"
#include "launcher/lifecycle/start/warm_claims.h"
#include "numa/host_topology.h"
#include "prealloc/populate.h"
#include "prealloc/prepared_memory.h"
#include "prealloc/progress_line.h"
#include "qemu_cmd/launch_plan.h"

namespace qlaunch::launcher {

// The region qlaunch's preallocator fills for a backend it preallocates (PreallocBy::kLauncher):
// memfd "qlaunch:<domain>:<backend id>", on the backend's host nodes, its workers on the CPUs the
// plan gave it (else those nearest its nodes). Start and attach-device of a DIMM use it.
prealloc::RegionSpec LauncherRegion(const qemu::MemoryBackend& b, const std::string& domain,
                                    const numa::HostTopology& host);

class LauncherMemory {
 public:
  // Nothing to do when the plan has no launcher backends (empty()). A backend with a file in
  // `warm` (warm_claims.h) gets that file's fd, already filled: no memfd, nothing to populate.
  static std::unique_ptr<LauncherMemory> Create(const qemu::LaunchPlan& plan, const numa::HostTopology& host,
                                                WarmClaims* warm = nullptr);
  ~LauncherMemory();

  bool empty() const { return memory_.empty() && warm_fds_.empty(); }
  uint64_t bytes() const { return bytes_; }
  // (fd in this process, the number QEMU expects it at), one per launcher backend.
  std::vector<std::pair<int, int>> Fds() const;

  void StartPopulate(prealloc::ProgressFn progress);
  void Stop() { stop_.store(true); }  // thread-safe; the workers end at their next chunk
  prealloc::PopulateResult Wait();
  void Release();

 private:
  LauncherMemory() = default;
  prealloc::PreparedMemory memory_;
  std::vector<int> target_fds_;
  std::vector<std::pair<int, int>> warm_fds_;  // (a warm file's fd, owned by WarmClaims; target)
  uint64_t bytes_ = 0;
  std::atomic<bool> stop_{false};
  std::thread worker_;
  prealloc::PopulateResult result_;
  std::exception_ptr error_;
};

// Makes the mem-path directories the plan's file backends need (MissingMemPathDirs): the
// domain's own go with it (cleanup paths of the claim) and belong to QEMU's user, mode 0700;
// shared parents (<hugetlbfs>/qlaunch, <state>/.ram) stay, root's, 0755.
void MakeMemPathDirs(const qemu::LaunchPlan& plan, const numa::HostTopology& host,
                     const std::string& memory_backing_dir, const QemuUser& qemu_user, StateClaim* claim);

// The launcher's population is done: wait for the workers (rethrowing their error), close our
// copies of the memfds (kLater: the caller does, with memory->Release()), end the progress line.
// With `timings`, the wait is marked as prealloc, the unmapping as unmap.
enum class Unmap { kNow, kLater };
void FinishLauncherMemory(LauncherMemory* memory, prealloc::ProgressLine* line, const StartInterrupt& interrupt,
                          Timings* timings = nullptr, Unmap unmap = Unmap::kNow);

}  // namespace qlaunch::launcher
