#include "launcher/bench/bench_kernel.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <set>
#include <stdexcept>

#include "domain/memory_totals.h"
#include "launcher/lifecycle/start/inputs.h"
#include "prealloc/populate.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

std::optional<std::string> FindPopulateRef(const std::string& explicit_path) {
  auto usable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); };
  if (!explicit_path.empty()) return usable(explicit_path) ? std::optional<std::string>(explicit_path) : std::nullopt;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (const fs::path& p : {self.parent_path() / "populate_ref", self.parent_path() / "../lib/qlaunch/populate_ref"})
    if (usable(p)) return fs::weakly_canonical(p).string();
  return std::nullopt;
}

KernelReferenceSize ReferenceSizeOf(const domain::DomainDef& def, uint64_t host_default_page) {
  KernelReferenceSize r;
  r.bytes = domain::TotalMemoryBytes(def);
  r.page_bytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));  // ordinary pages
  if (def.memory_backing.hugepages) {
    std::set<uint64_t> sizes;
    for (const domain::HugePage& p : def.memory_backing.pages) sizes.insert(p.size_bytes ? p.size_bytes : host_default_page);
    if (sizes.empty()) sizes.insert(host_default_page);
    if (sizes.size() > 1) throw std::runtime_error("the kernel reference needs one page size; the domain has several");
    r.page_bytes = *sizes.begin();
  }
  if (r.page_bytes == 0 || r.bytes % r.page_bytes != 0)
    throw std::runtime_error("the kernel reference needs the domain's memory in whole pages");
  return r;
}

namespace {

class KernelStarter : public Starter {
 public:
  // With a `floor`: the overlap starter, which runs it while the reference runs.
  KernelStarter(const BenchConfig& cfg, KernelReferenceSize size, std::string binary,
                std::unique_ptr<Starter> floor = nullptr)
      : cfg_(cfg), size_(size), binary_(std::move(binary)), floor_(std::move(floor)) {}
  std::string name() const override { return floor_ ? "overlap" : "kernel"; }

  StarterRun Run() override {
    const std::vector<std::string> argv = {binary_, std::to_string(size_.bytes >> 20),
                                           std::to_string(size_.page_bytes >> 10),
                                           std::to_string(prealloc::UsableCpuCount())};
    std::chrono::steady_clock::time_point floor_done;
    std::function<void()> beside;
    if (floor_)
      beside = [&] {
        // The floor's QEMU answers, then quits (untimed, a few ms of CPU while the fill may still run).
        floor_done = floor_->Run().stop;
      };
    // Fork to exit: the populate is done only once the process has exited.
    ChildRun child = RunChild(argv, cfg_.work_dir, name() + "-reference", cfg_.interrupt, {}, beside);
    if (!child.ok()) throw std::runtime_error(binary_ + " " + child.Describe() + child.ErrTail());
    return StarterRun::Between(child.forked, std::max(child.exited, floor_done));
  }

 private:
  BenchConfig cfg_;
  KernelReferenceSize size_;
  std::string binary_;
  std::unique_ptr<Starter> floor_;
};

}  // namespace

std::unique_ptr<Starter> MakeKernelStarter(const BenchConfig& cfg, const domain::DomainDef& def,
                                           const std::string& populate_ref) {
  return std::make_unique<KernelStarter>(cfg, ReferenceSizeOf(def, LoadHost("").default_hugepage_bytes), populate_ref);
}

std::unique_ptr<Starter> MakeOverlapStarter(const BenchConfig& cfg, const domain::DomainDef& def,
                                            const std::string& populate_ref) {
  return std::make_unique<KernelStarter>(cfg, ReferenceSizeOf(def, LoadHost("").default_hugepage_bytes), populate_ref,
                                         MakeFloorStarter(cfg, def, "overlap-floor"));
}

}  // namespace qlaunch::launcher
