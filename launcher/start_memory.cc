#include "launcher/start_memory.h"

#include "prealloc/mem_policy.h"
#include "prealloc/worker_plan.h"

namespace qlaunch::launcher {

std::unique_ptr<LauncherMemory> LauncherMemory::Create(const qemu::LaunchPlan& plan,
                                                       const numa::HostTopology& host) {
  std::unique_ptr<LauncherMemory> m(new LauncherMemory());
  for (const auto& b : plan.backends) {
    if (b.prealloc != qemu::PreallocBy::kLauncher) continue;
    const std::string what = "memory '" + b.id + "'";
    prealloc::MemPolicy policy = prealloc::MemPolicy::Make(what, b.policy, b.host_nodes);
    m->memfds_.push_back(prealloc::Memfd::Create("qlaunch:" + plan.name + ":" + b.id, b.size_bytes, b.page_size_bytes));
    const prealloc::Memfd& fd = m->memfds_.back();
    prealloc::MapOptions mopts;
    mopts.host_nodes = b.host_nodes;
    m->mappings_.push_back(prealloc::Mapping::Map(fd, mopts));
    m->mappings_.back().ApplyPolicy(policy, what);

    prealloc::PopulateRegion r;
    r.name = b.id;
    r.memory = m->mappings_.back().bytes();
    r.page_bytes = fd.page_bytes();
    r.hugetlb = fd.hugetlb();
    r.host_nodes = b.host_nodes;
    r.cpus = b.prealloc_cpus.Empty() ? prealloc::WorkerCpus(host, b.host_nodes) : b.prealloc_cpus;
    r.threads = b.launcher_threads;
    m->regions_.push_back(std::move(r));
    m->target_fds_.push_back(b.launcher_fd);
    m->bytes_ += b.size_bytes;
  }
  return m;
}

LauncherMemory::~LauncherMemory() {
  Stop();
  if (worker_.joinable()) worker_.join();
  Release();
}

std::vector<std::pair<int, int>> LauncherMemory::Fds() const {
  std::vector<std::pair<int, int>> out;
  for (size_t i = 0; i < memfds_.size(); ++i) out.emplace_back(memfds_[i].fd(), target_fds_[i]);
  return out;
}

void LauncherMemory::StartPopulate(prealloc::ProgressFn progress) {
  worker_ = std::thread([this, progress = std::move(progress)] {
    try {
      prealloc::PopulateOptions opts;
      opts.stop = &stop_;
      opts.progress = progress;
      result_ = prealloc::Populate(regions_, opts);
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
  regions_.clear();
  mappings_.clear();  // unmap before closing: the memfds then hold the pages alone
  memfds_.clear();
}

}  // namespace qlaunch::launcher
