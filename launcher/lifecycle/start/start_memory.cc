#include "launcher/lifecycle/start/start_memory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "launcher/lifecycle/start/preflight.h"
#include "prealloc/worker_plan.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

prealloc::RegionSpec LauncherRegion(const qemu::MemoryBackend& b, const std::string& domain,
                                    const numa::HostTopology& host) {
  prealloc::RegionSpec s;
  s.name = b.id;
  s.memfd_name = "qlaunch:" + domain + ":" + b.id;
  s.size_bytes = b.size_bytes;
  s.page_bytes = b.page_size_bytes;
  s.host_nodes = b.host_nodes;
  s.policy = b.policy;
  s.worker_cpus = b.prealloc_cpus.Empty() ? prealloc::WorkerCpus(host, b.host_nodes) : b.prealloc_cpus;
  s.threads = b.launcher_threads;
  return s;
}

std::unique_ptr<LauncherMemory> LauncherMemory::Create(const qemu::LaunchPlan& plan,
                                                       const numa::HostTopology& host, WarmClaims* warm) {
  std::unique_ptr<LauncherMemory> m(new LauncherMemory());
  std::vector<prealloc::RegionSpec> specs;
  for (const auto& b : plan.backends) {
    if (b.prealloc != qemu::PreallocBy::kLauncher) continue;
    if (HeldFile* f = warm ? warm->Find(b.id) : nullptr) {
      m->warm_fds_.emplace_back(f->fd.get(), b.launcher_fd);
      continue;
    }
    specs.push_back(LauncherRegion(b, plan.name, host));
    m->target_fds_.push_back(b.launcher_fd);
    m->bytes_ += b.size_bytes;
  }
  m->memory_ = prealloc::PreparedMemory::Create(specs);
  return m;
}

LauncherMemory::~LauncherMemory() {
  Stop();
  if (worker_.joinable()) worker_.join();
  Release();
}

std::vector<std::pair<int, int>> LauncherMemory::Fds() const {
  std::vector<std::pair<int, int>> out;
  const auto& memfds = memory_.memfds();
  for (size_t i = 0; i < memfds.size(); ++i) out.emplace_back(memfds[i].fd(), target_fds_[i]);
  out.insert(out.end(), warm_fds_.begin(), warm_fds_.end());
  return out;
}

void LauncherMemory::StartPopulate(prealloc::ProgressFn progress) {
  if (memory_.empty()) return;  // every backend warm: nothing to fill
  worker_ = std::thread([this, progress = std::move(progress)] {
    try {
      prealloc::PopulateOptions opts;
      opts.stop = &stop_;
      opts.progress = progress;
      result_ = prealloc::Populate(memory_.regions(), opts);
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

prealloc::PopulateResult LauncherMemory::Wait() {
  if (worker_.joinable()) worker_.join();
  if (error_) std::rethrow_exception(error_);
  return result_;
}

void LauncherMemory::Release() {
  if (worker_.joinable()) {  // never unmap under running workers
    Stop();
    worker_.join();
  }
  memory_.Release();  // unmaps before closing: QEMU's copies of the memfds keep the pages
}

void MakeMemPathDirs(const qemu::LaunchPlan& plan, const numa::HostTopology& host,
                     const std::string& memory_backing_dir, const QemuUser& qemu_user, StateClaim* claim) {
  std::vector<fs::path> roots;
  for (const auto& [size, mount] : host.hugetlbfs_mounts) roots.emplace_back(mount);
  // <state>/.ram (shared, root's, 0755) holds each domain's memory backing dir, made below,
  // for the domains that have one.
  const fs::path ram_root = fs::path(memory_backing_dir).parent_path();
  for (const auto& b : plan.backends)
    if (fs::path(b.mem_path).lexically_normal() == fs::path(memory_backing_dir).lexically_normal()) {
      std::error_code ram_ec;
      fs::create_directories(ram_root, ram_ec);
      if (ram_ec) throw std::runtime_error("cannot create " + ram_root.string() + ": " + ram_ec.message());
      break;
    }
  roots.push_back(ram_root);
  std::set<fs::path> mem_paths;
  for (const auto& b : plan.backends) mem_paths.insert(fs::path(b.mem_path).lexically_normal());
  for (const fs::path& d : MissingMemPathDirs(plan, roots)) {
    std::error_code ec;
    fs::create_directory(d, ec);
    if (ec) throw std::runtime_error("cannot create mem-path directory " + d.string() + ": " + ec.message());
    // The domain's own directories go with it, and belong to QEMU's user (mode 0700); shared
    // parents (<hugetlbfs>/qlaunch, <state>/.ram) stay, root's, 0755.
    if (!mem_paths.count(d)) continue;
    claim->AddCleanupPath(d);
    if ((qemu_user.change && ::chown(d.c_str(), qemu_user.uid, qemu_user.gid) != 0) || ::chmod(d.c_str(), 0700) != 0)
      throw std::runtime_error("cannot give mem-path directory " + d.string() + " to " + (qemu_user.user + ":" + qemu_user.group) + ": " +
                               std::strerror(errno));
  }
}

void FinishLauncherMemory(LauncherMemory* memory, prealloc::ProgressLine* line, const StartInterrupt& interrupt,
                          Timings* timings, Unmap unmap) {
  if (memory) {
    memory->Wait();
    if (timings) timings->Mark(Phase::kPrealloc);
    if (unmap == Unmap::kNow) {
      memory->Release();
      if (timings) timings->Mark(Phase::kUnmap);
    }
  }
  if (line) line->Finish();
  interrupt.ThrowIfInterrupted();
}

}  // namespace qlaunch::launcher
