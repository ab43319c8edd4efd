#include "launcher/lifecycle/start/warm_fill.h"

#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/byte_size.h"
#include "launcher/host/pool_lock.h"
#include "launcher/host/pool_reserved.h"
#include "launcher/host/warm_pool.h"
#include "launcher/lifecycle/start/preflight.h"
#include "prealloc/error.h"
#include "prealloc/mapping.h"
#include "prealloc/mem_policy.h"
#include "prealloc/memfd.h"
#include "prealloc/worker_plan.h"

namespace qlaunch::launcher {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// A pool file mapped, bound to its node, as a region the workers fill.
struct MappedFile {
  HeldFile file;
  prealloc::Memfd memfd;  // a second fd of it, for the mapping
  prealloc::Mapping mapping;
  prealloc::PopulateRegion region;
};

MappedFile MapFile(HeldFile file, uint64_t page_bytes, unsigned threads, const numa::HostTopology& host) {
  MappedFile m;
  m.file = std::move(file);
  const int fd = ::dup(m.file.fd.get());
  if (fd < 0) throw std::runtime_error("cannot dup the fd of " + m.file.path.string());
  const IdSet node{m.file.name.node};
  const std::string what = "pool file " + m.file.path.filename().string();
  m.memfd = prealloc::Memfd::Adopt(fd, what, m.file.name.bytes, page_bytes);
  prealloc::MapOptions mopts;
  mopts.host_nodes = node;
  m.mapping = prealloc::Mapping::Map(m.memfd, mopts);  // reserves the pages: a short pool fails here
  m.mapping.ApplyPolicy(prealloc::MemPolicy::Make(what, "bind", node), what);
  m.region.name = what;
  m.region.memory = m.mapping.bytes();
  m.region.page_bytes = page_bytes;
  m.region.hugetlb = true;
  m.region.host_nodes = node;
  m.region.cpus = prealloc::WorkerCpus(host, node);
  m.region.threads = threads;
  return m;
}

// "; the hugetlbfs at DIR holds N more pages (its size= limit)" when its limit is what refused
// `bytes`, else "".
std::string FullMount(const fs::path& dir, uint64_t page_bytes, uint64_t bytes) {
  struct statfs st {};
  if (::statfs(dir.c_str(), &st) != 0 || st.f_blocks == 0 || st.f_bavail * page_bytes >= bytes) return "";
  return "; the hugetlbfs at " + dir.parent_path().string() + " is full: " + std::to_string(st.f_bavail) + " of its " +
         std::to_string(st.f_blocks) + " pages left (its size= limit), the pool set needs " +
         std::to_string(bytes / page_bytes) + " (nothing was made)";
}

std::vector<qemu::LaunchPlan::PoolNeed> NeedsOf(const std::vector<ShapedBackend>& set, unsigned count) {
  std::map<std::pair<unsigned, uint64_t>, uint64_t> pages;
  for (const auto& b : set) pages[{b.shape.node, b.shape.page_bytes}] += b.shape.bytes / b.shape.page_bytes * count;
  std::vector<qemu::LaunchPlan::PoolNeed> needs;
  for (const auto& [key, n] : pages) needs.push_back({static_cast<int>(key.first), key.second, n});
  return needs;
}

}  // namespace

std::vector<ShapedBackend> PoolShapes(const qemu::LaunchPlan& plan, const numa::HostTopology& host,
                                      const std::string& what) {
  std::vector<ShapedBackend> set;
  std::string problems;
  for (const auto& b : plan.backends) {
    if (b.virtio_mem) continue;  // plugged later, from the device's own memory
    std::optional<WarmShape> shape = ShapeOf(b, host);
    std::string why;
    if (b.page_size_bytes == 0)
      why = "not on hugepages (the pool holds hugepages only: <memoryBacking><hugepages/>)";
    else if (b.prealloc != qemu::PreallocBy::kLauncher)
      why = std::string("preallocated by ") + (b.prealloc == qemu::PreallocBy::kQemu ? "QEMU" : "nobody") +
            ", not by qlaunch (a warm file reaches QEMU by fd, as qlaunch's memory does: --prealloc launcher)";
    else if (!shape)
      why = "not bound to one host node (<numatune> mode='strict' or 'preferred' with one node)";
    else if (!host.hugetlbfs_mounts.count(shape->page_bytes))
      why = "no hugetlbfs is mounted for " + FormatPageSize(shape->page_bytes) + " pages";
    if (!why.empty()) {
      problems += "\n  memory '" + b.id + "': " + why;
      continue;
    }
    set.push_back({b.id, *shape, b.launcher_threads});
  }
  if (!problems.empty()) throw std::runtime_error(what + ": the pool cannot hold this domain's memory:" + problems);
  if (set.empty()) throw std::runtime_error(what + ": the domain has no memory the pool could hold");
  return set;
}

PoolFillResult FillPool(const std::vector<ShapedBackend>& set, unsigned count, const numa::HostTopology& host_in,
                        const std::atomic<bool>* stop, prealloc::ProgressFn progress) {
  numa::HostTopology host = host_in;
  const auto dirs = PoolDirs(host);
  std::vector<std::vector<MappedFile>> sets;  // not warm yet: given back on any way out but success
  struct GiveBack {
    std::vector<std::vector<MappedFile>>& sets;
    ~GiveBack() {
      for (auto& s : sets)
        for (auto& m : s) {
          m.mapping.reset();
          PoolDir(m.file.path.parent_path()).GiveBack(&m.file);
        }
    }
  } give_back{sets};
  {
    // Counted and reserved under the pool lock, as a start's pre-flight does: a fill and a start
    // never both count the same free pages.
    HugepagePoolLock lock([stop] {
      if (stop && stop->load()) throw prealloc::PreallocCancelled(0, 0);
    });
    numa::RereadHugepagePools(&host);
    const auto reserved = ReadReservedHugepagesConsistently(&host);
    std::string shortfall;
    for (const Diagnostic& d : CheckHugepagePools(NeedsOf(set, count), host, reserved)) shortfall += "\n  " + d.message;
    if (!shortfall.empty())
      throw std::runtime_error("the hugepage pool is short of pages for " + std::to_string(count) + " set" +
                               (count == 1 ? "" : "s") + " (nothing was made):" + shortfall);
    for (unsigned i = 0; i < count; ++i) {
      sets.emplace_back();
      for (const auto& b : set) {
        PoolDir dir(dirs.at(b.shape.page_bytes));
        dir.Create();
        HeldFile f = dir.CreateFill(b.shape.node, b.shape.bytes);
        const std::string path = f.path.string();
        try {  // a full hugetlbfs (a mount's size=) or a short pool refuses the mapping
          sets.back().push_back(MapFile(std::move(f), b.shape.page_bytes, b.threads, host));
        } catch (const prealloc::PreallocError& e) {
          ::unlink(path.c_str());  // not even mapped: nothing of it is left
          throw std::runtime_error(e.what() + FullMount(dir.path(), b.shape.page_bytes, b.shape.bytes));
        } catch (...) {
          ::unlink(path.c_str());
          throw;
        }
      }
    }
  }
  uint64_t total = 0, set_bytes = 0;
  for (const auto& b : set) set_bytes += b.shape.bytes;
  total = set_bytes * count;
  PoolFillResult result;
  const Clock::time_point begin = Clock::now();
  while (!sets.empty()) {
    if (stop && stop->load()) throw prealloc::PreallocCancelled(result.bytes, total);
    std::vector<prealloc::PopulateRegion> regions;
    for (const auto& m : sets.front()) regions.push_back(m.region);
    prealloc::PopulateOptions opts;
    opts.stop = stop;
    const uint64_t before = result.bytes;
    if (progress) opts.progress = [&](uint64_t done, uint64_t) { progress(before + done, total); };
    prealloc::Populate(regions, opts);  // throws: this set and the rest are given back
    for (auto& m : sets.front()) {
      m.mapping.reset();
      PoolDir(m.file.path.parent_path()).MarkWarm(&m.file);  // every page faulted in: zero
    }
    sets.erase(sets.begin());
    ++result.sets;
    result.bytes += set_bytes;
    while (!sets.empty() && PoolFault("fill-stall") && !(stop && stop->load()))  // a signal meets the next set
      ::usleep(10000);
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  if (progress) progress(total, total);
  return result;
}

ScrubResult ScrubPool(const numa::HostTopology& host, const std::atomic<bool>* stop) {
  ScrubResult result;
  for (const auto& [page, path] : PoolDirs(host)) {
    PoolDir dir(path);
    int held_waits = 0;
    while (!(stop && stop->load())) {
      std::optional<HeldFile> f = dir.TakeDirty();
      if (!f) {
        // A dirty file some process still holds (a QEMU unmaps a detached DIMM a moment after
        // object-del, and exits a moment after destroy): waited for up to 10 s, then left dirty
        // for the next scrub.
        bool held = false;
        for (const WarmEntry& e : dir.List()) held |= e.name.state == WarmState::kDirty;
        if (!held || ++held_waits > 100) break;
        ::usleep(100000);
        continue;
      }
      if (PoolFault("clean-early")) {  // the clean mark before the scrub: what must never be
        dir.MarkWarm(&*f);
        return result;
      }
      MappedFile m = MapFile(std::move(*f), page, 0, host);
      prealloc::PopulateOptions opts;
      opts.method = prealloc::PopulateMethod::kZero;
      opts.stop = stop;
      if (PoolFault("scrub-stall")) {  // half zeroed, then waits to be killed
        prealloc::PopulateRegion half = m.region;
        half.memory = half.memory.first(half.memory.size() / 2 / page * page);
        if (!half.memory.empty()) prealloc::Populate({&half, 1}, opts);
        for (;;) ::pause();
      }
      const Clock::time_point begin = Clock::now();
      const prealloc::PopulateResult done = prealloc::Populate({&m.region, 1}, opts);
      result.seconds += std::chrono::duration<double>(Clock::now() - begin).count();
      if (!done.regions.empty())
        result.scrubbed.push_back({m.file.name.node, m.file.name.bytes, done.regions[0].cpus, done.regions[0].observed_cpus});
      m.mapping.reset();
      dir.MarkWarm(&m.file);  // the clean mark: only after every byte is zero
      ++result.files;
      result.bytes += m.file.name.bytes;
    }
  }
  return result;
}

}  // namespace qlaunch::launcher
