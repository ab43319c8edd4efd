#include "launcher/start_memory.h"

#include "prealloc/worker_plan.h"

namespace qlaunch::launcher {

std::unique_ptr<LauncherMemory> LauncherMemory::Create(const qemu::LaunchPlan& plan,
                                                       const numa::HostTopology& host) {
  std::unique_ptr<LauncherMemory> m(new LauncherMemory());
  std::vector<prealloc::RegionSpec> specs;
  for (const auto& b : plan.backends) {
    if (b.prealloc != qemu::PreallocBy::kLauncher) continue;
    prealloc::RegionSpec s;
    s.name = b.id;
    s.memfd_name = "qlaunch:" + plan.name + ":" + b.id;
    s.size_bytes = b.size_bytes;
    s.page_bytes = b.page_size_bytes;
    s.host_nodes = b.host_nodes;
    s.policy = b.policy;
    s.worker_cpus = b.prealloc_cpus.Empty() ? prealloc::WorkerCpus(host, b.host_nodes) : b.prealloc_cpus;
    s.threads = b.launcher_threads;
    specs.push_back(std::move(s));
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
  return out;
}

void LauncherMemory::StartPopulate(prealloc::ProgressFn progress) {
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

}  // namespace qlaunch::launcher
