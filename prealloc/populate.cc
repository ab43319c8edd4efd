#include "prealloc/populate.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cerrno>
#include <condition_variable>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

#include "common/byte_size.h"
#include "prealloc/chunk_cursor.h"
#include "prealloc/error.h"
#include "prealloc/hugepage_pool.h"
#include "prealloc/page_fault_in.h"
#include "prealloc/worker_plan.h"

namespace qlaunch::prealloc {
namespace {

using Clock = std::chrono::steady_clock;

std::string NodeSuffix(const IdSet& nodes) {
  if (nodes.Empty()) return "";
  return (nodes.Size() > 1 ? " on nodes " : " on node ") + nodes.ToString();
}

std::string FailureMessage(const PopulateRegion& r, int err, const char* how) {
  const uint64_t size = r.memory.size();
  if (r.hugetlb && (err == ENOMEM || err == EFAULT)) {
    uint64_t populated = ResidentBytes(r.memory.data(), size, r.page_bytes);
    return PoolExhaustedMessage(r.name, r.page_bytes, r.host_nodes, size / r.page_bytes,
                                populated / r.page_bytes);
  }
  std::string what = "memory '" + r.name + "': populating " + FormatBytes(size) + " of " +
                     FormatPageSize(r.page_bytes) + " pages" + NodeSuffix(r.host_nodes) + " failed";
  if (err == EHWPOISON) return what + ": hardware memory error (" + how + ")";
  if (err == ENOMEM || err == EFAULT)
    return ErrnoMessage(what + ": out of memory (" + std::string(how) + ")", ENOMEM);
  return ErrnoMessage(what + " (" + std::string(how) + ")", err);
}

// One contiguous part of a region, handed out chunk by chunk from its start.
struct Slice {
  uint64_t base = 0;
  ChunkCursor cursor;
  Slice(uint64_t base_bytes, uint64_t size_bytes, uint64_t chunk_bytes) : base(base_bytes), cursor(size_bytes, chunk_bytes) {}
};

// A region is cut into one slice per worker, so that each worker fills its own part of the file
// (neighbouring chunks from two workers would share the page cache's index nodes and bounce
// their cache lines). A worker whose slice is done takes chunks from the others', so a worker
// that the machine slows down holds nobody up.
struct RegionState {
  const PopulateRegion* spec = nullptr;
  std::vector<std::unique_ptr<Slice>> slices;
  std::atomic<uint64_t> done{0};
  unsigned threads = 0;

  // The next chunk for the worker at home in slice `home`, as an offset into the region.
  std::optional<Chunk> Next(size_t home) {
    for (size_t k = 0; k < slices.size(); ++k) {
      Slice& s = *slices[(home + k) % slices.size()];
      if (std::optional<Chunk> c = s.cursor.Next()) return Chunk{s.base + c->offset, c->length};
    }
    return std::nullopt;
  }
};

// One worker's stint on one region.
struct Slot {
  size_t region = 0;
  size_t home = 0;  // its slice
  std::optional<Clock::time_point> start, end;
  IdSet observed_cpus;
};

struct Engine {
  std::vector<RegionState> regions;
  std::vector<Slot> slots;
  std::atomic<size_t> next_slot{0};
  PopulateMethod method = PopulateMethod::kMadvise;
  const std::atomic<bool>* stop = nullptr;
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  std::string error;              // a failure not about a region's memory, else
  const PopulateRegion* error_region = nullptr;  // the first region that failed to populate
  int error_errno = 0;
  const char* error_how = "";

  bool ShouldStop() const {
    return failed.load(std::memory_order_relaxed) ||
           (stop && stop->load(std::memory_order_relaxed));
  }
  void Fail(std::string message) {
    std::lock_guard lock(error_mu);
    if (!failed) error = std::move(message);
    failed = true;
  }
  // The message is built once every worker is done, so that it counts the pages populated.
  void FailRegion(const PopulateRegion& r, int err, const char* how) {
    std::lock_guard lock(error_mu);
    if (!failed) {
      error_region = &r;
      error_errno = err;
      error_how = how;
    }
    failed = true;
  }
  std::string ErrorMessage() const {
    return error_region ? FailureMessage(*error_region, error_errno, error_how) : error;
  }
  uint64_t Done() const {
    uint64_t sum = 0;
    for (const RegionState& r : regions) sum += r.done.load(std::memory_order_relaxed);
    return sum;
  }
  void Work();
  void RunSlot(Slot& slot);
};

// Pins the calling thread to `cpus`; 0 or an errno.
int PinTo(const IdSet& cpus) {
  const size_t ncpus = cpus.Max() + 1;
  cpu_set_t* set = CPU_ALLOC(ncpus);
  if (!set) return ENOMEM;
  const size_t bytes = CPU_ALLOC_SIZE(ncpus);
  CPU_ZERO_S(bytes, set);
  for (unsigned c : cpus) CPU_SET_S(c, bytes, set);
  int err = pthread_setaffinity_np(pthread_self(), bytes, set);
  CPU_FREE(set);
  return err;
}

void RecordCpu(Slot& slot) {
  int cpu = sched_getcpu();
  if (cpu >= 0) slot.observed_cpus.Insert(static_cast<unsigned>(cpu));
}

void Engine::Work() {
  std::optional<SigbusGuard> guard;
  if (method == PopulateMethod::kTouch) guard.emplace();
  for (;;) {
    size_t s = next_slot.fetch_add(1, std::memory_order_relaxed);
    if (s >= slots.size() || ShouldStop()) return;
    RunSlot(slots[s]);
  }
}

void Engine::RunSlot(Slot& slot) {
  RegionState& r = regions[slot.region];
  const PopulateRegion& spec = *r.spec;
  slot.start = Clock::now();
  if (!spec.cpus.Empty()) {
    if (int err = PinTo(spec.cpus)) {
      Fail(ErrnoMessage("memory '" + spec.name + "': cannot pin a populate worker to CPUs " +
                            spec.cpus.ToString() + " (pthread_setaffinity_np)",
                        err));
      return;
    }
  }
  RecordCpu(slot);
  while (!ShouldStop()) {
    std::optional<Chunk> c = r.Next(slot.home);
    if (!c) break;
    std::byte* addr = spec.memory.data() + c->offset;
    if (method == PopulateMethod::kZero) {
      std::memset(addr, 0, c->length);
      r.done.fetch_add(c->length, std::memory_order_relaxed);
    } else if (method == PopulateMethod::kTouch) {
      size_t done = TouchPages(addr, c->length, spec.page_bytes);
      r.done.fetch_add(done, std::memory_order_relaxed);
      if (done < c->length) {
        FailRegion(spec, EFAULT, "SIGBUS while touching pages");
        break;
      }
    } else {
      if (int err = MadvisePopulateWrite(addr, c->length)) {
        FailRegion(spec, err, "madvise MADV_POPULATE_WRITE");
        break;
      }
      r.done.fetch_add(c->length, std::memory_order_relaxed);
    }
    RecordCpu(slot);
  }
  slot.end = Clock::now();
}

// What each region asks for: its `threads`, else one per CPU of its set.
unsigned WantedThreads(const PopulateRegion& r) {
  return r.threads ? r.threads : std::max<unsigned>(1, r.cpus.Size());
}

void Validate(const PopulateRegion& r) {
  if (r.page_bytes == 0 || r.memory.empty() || r.memory.size() % r.page_bytes != 0 ||
      reinterpret_cast<uintptr_t>(r.memory.data()) % r.page_bytes != 0)
    throw PreallocError("memory '" + r.name + "': populate needs a non-empty page-aligned region");
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

RegionResult Summarize(size_t index, const PopulateRegion& region, const Engine& eng) {
  RegionResult rr;
  rr.name = region.name;
  rr.bytes = eng.regions[index].done.load();
  rr.threads = eng.regions[index].threads;
  rr.cpus = region.cpus;
  std::optional<Clock::time_point> first, last;
  for (const Slot& s : eng.slots) {
    if (s.region != index || !s.start) continue;
    rr.observed_cpus = rr.observed_cpus.Union(s.observed_cpus);
    if (!first || *s.start < *first) first = s.start;
    if (s.end && (!last || *s.end > *last)) last = s.end;
  }
  if (first && last) rr.seconds = Seconds(*last - *first);
  return rr;
}

}  // namespace

bool HaveMadvisePopulateWrite() {
  static const bool have = [] {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    bool ok = MadvisePopulateWrite(static_cast<std::byte*>(p), page) == 0;
    munmap(p, page);
    return ok;
  }();
  return have;
}

unsigned UsableCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

const char* ToString(PopulateMethod method) {
  switch (method) {
    case PopulateMethod::kAuto: return "auto";
    case PopulateMethod::kMadvise: return "madvise";
    case PopulateMethod::kTouch: return "touch";
    case PopulateMethod::kZero: return "zero";
  }
  return "?";
}

PopulateResult Populate(std::span<const PopulateRegion> regions, const PopulateOptions& opts) {
  for (const PopulateRegion& r : regions) Validate(r);
  Engine eng;
  eng.stop = opts.stop;
  eng.method = opts.method;
  if (eng.method == PopulateMethod::kAuto)
    eng.method = HaveMadvisePopulateWrite() ? PopulateMethod::kMadvise : PopulateMethod::kTouch;
  else if (eng.method == PopulateMethod::kMadvise && !HaveMadvisePopulateWrite())
    throw PreallocError("this kernel has no MADV_POPULATE_WRITE (needs Linux 5.14 or later)");

  const unsigned budget = opts.max_threads ? opts.max_threads : UsableCpuCount();
  // Threads per region: what it wants, within the budget, no more than it has chunks.
  std::vector<unsigned> wanted;
  for (const PopulateRegion& r : regions) wanted.push_back(WantedThreads(r));
  std::vector<unsigned> threads = DistributeThreads(wanted, budget);
  eng.regions = std::vector<RegionState>(regions.size());
  uint64_t total = 0;
  for (size_t i = 0; i < regions.size(); ++i) {
    const PopulateRegion& r = regions[i];
    const uint64_t size = r.memory.size();
    uint64_t chunk = opts.chunk_bytes
                         ? (opts.chunk_bytes + r.page_bytes - 1) / r.page_bytes * r.page_bytes
                         : ChunkBytes(size, r.page_bytes, threads[i]);
    threads[i] = static_cast<unsigned>(std::min<uint64_t>(threads[i], (size + chunk - 1) / chunk));
    eng.regions[i].spec = &r;
    // Slices of whole chunks: equal shares, the first ones a chunk longer when it does not divide.
    const uint64_t chunks = (size + chunk - 1) / chunk;
    for (uint64_t k = 0, first = 0; k < threads[i]; ++k) {
      const uint64_t n = chunks / threads[i] + (k < chunks % threads[i]);
      const uint64_t base = first * chunk;
      eng.regions[i].slices.push_back(std::make_unique<Slice>(base, std::min(n * chunk, size - base), chunk));
      first += n;
    }
    eng.regions[i].threads = threads[i];
    total += size;
  }

  // Slots round-robin over regions, so that every region starts as early as the budget allows.
  unsigned most = threads.empty() ? 0 : *std::max_element(threads.begin(), threads.end());
  for (unsigned k = 0; k < most; ++k)
    for (size_t i = 0; i < regions.size(); ++i)
      if (k < threads[i]) eng.slots.push_back(Slot{i, k, {}, {}, {}});

  const unsigned workers = static_cast<unsigned>(std::min<size_t>(budget, eng.slots.size()));
  const Clock::time_point start = Clock::now();
  {
    std::jthread reporter;
    if (opts.progress) {
      reporter = std::jthread([&](std::stop_token token) {
        std::mutex mu;
        std::condition_variable_any cv;
        std::unique_lock lock(mu);
        while (!cv.wait_for(lock, token, opts.progress_interval, [] { return false; }) &&
               !token.stop_requested())
          opts.progress(eng.Done(), total);
      });
    }
    // Every worker exists before any of them faults a page: creating a thread maps its stack,
    // which would wait for the mmap lock behind the page faults of the workers already running.
    std::latch gate(workers);
    std::vector<std::jthread> pool;
    pool.reserve(workers);
    try {
      for (unsigned w = 0; w < workers; ++w)
        pool.emplace_back([&eng, &gate] {
          gate.arrive_and_wait();
          eng.Work();
        });
    } catch (const std::system_error& e) {
      eng.Fail(std::string("cannot start populate workers: ") + e.what());
      gate.count_down(workers - pool.size());  // the ones that exist see the failure and stop
    }
  }  // workers joined, then the reporter
  const Clock::time_point end = Clock::now();
  const uint64_t done = eng.Done();
  if (opts.progress) opts.progress(done, total);

  if (eng.failed) throw PreallocError(eng.ErrorMessage());
  if (opts.stop && opts.stop->load() && done < total) throw PreallocCancelled(done, total);

  PopulateResult result;
  result.bytes = done;
  result.seconds = Seconds(end - start);
  result.threads = workers;
  result.method = eng.method;
  for (size_t i = 0; i < regions.size(); ++i)
    result.regions.push_back(Summarize(i, regions[i], eng));
  return result;
}

}  // namespace qlaunch::prealloc
