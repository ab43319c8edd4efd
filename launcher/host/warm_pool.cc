#include "launcher/host/warm_pool.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/file_lock.h"

extern char** environ;

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

constexpr std::pair<WarmState, const char*> kStates[] = {{WarmState::kFill, "fill"},
                                                         {WarmState::kWarm, "warm"},
                                                         {WarmState::kUse, "use"},
                                                         {WarmState::kDirty, "dirty"},
                                                         {WarmState::kScrub, "scrub"}};

std::string NewSerial() {
  static std::atomic<unsigned> counter{0};
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llx-%d-%u", static_cast<unsigned long long>(ns), static_cast<int>(::getpid()),
                counter.fetch_add(1));
  return buf;
}

// Renames `e` to state `to` (and `bytes`, when given); updates it.
void Rename(WarmEntry* e, WarmState to, std::optional<uint64_t> bytes = std::nullopt) {
  WarmName n = e->name;
  n.state = to;
  if (bytes) n.bytes = *bytes;
  const fs::path target = e->path.parent_path() / FormatWarmName(n);
  if (::rename(e->path.c_str(), target.c_str()) != 0)
    throw std::runtime_error(Errno("cannot rename " + e->path.string() + " to " + target.filename().string(), errno));
  e->path = target;
  e->name = n;
}

// Whether another holds the flock of the file (a live worker); false when it is gone.
bool WorkerHolds(const fs::path& p) {
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  return ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

// Whether any process but us has the file open or mapped: a write lease is refused then. A lease
// refused for any other reason counts as open: only a granted lease proves that nobody has it.
bool OpenElsewhere(int fd) {
  if (::fcntl(fd, F_SETLEASE, F_WRLCK) != 0) return true;
  ::fcntl(fd, F_SETLEASE, F_UNLCK);
  return false;
}

// A use file nobody has open or mapped: its claimer was killed (SIGKILL) before it recorded the
// file in a domain's state dir, or before QEMU took it; or its QEMU ended and nobody has released
// it yet. Whoever had it may have let a guest write it: it is dirty.
bool OrphanedUse(const fs::path& p) {
  UniqueFd fd(::open(p.c_str(), O_RDWR | O_CLOEXEC));
  return fd.valid() && !OpenElsewhere(fd.get());
}

}  // namespace

bool PoolFault(std::string_view what) {
  const char* env = std::getenv(kPoolFaultEnv);
  return env && what == env;
}

const char* ToString(WarmState s) {
  for (auto [state, name] : kStates)
    if (state == s) return name;
  return "?";
}

std::string FormatWarmName(const WarmName& n) {
  return std::string(ToString(n.state)) + ".n" + std::to_string(n.node) + "." + std::to_string(n.bytes) + "." +
         n.serial;
}

std::optional<WarmName> ParseWarmName(std::string_view file) {
  WarmName n;
  const size_t d1 = file.find('.');
  if (d1 == std::string_view::npos) return std::nullopt;
  bool known = false;
  for (auto [state, name] : kStates)
    if (file.substr(0, d1) == name) n.state = state, known = true;
  if (!known) return std::nullopt;
  auto number = [](std::string_view s) -> std::optional<uint64_t> {
    if (s.empty() || s.size() > 19) return std::nullopt;
    uint64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
  };
  const size_t d2 = file.find('.', d1 + 1), d3 = d2 == std::string_view::npos ? d2 : file.find('.', d2 + 1);
  if (d3 == std::string_view::npos || file.substr(d1 + 1, 1) != "n") return std::nullopt;
  auto node = number(file.substr(d1 + 2, d2 - d1 - 2));
  auto bytes = number(file.substr(d2 + 1, d3 - d2 - 1));
  n.serial = std::string(file.substr(d3 + 1));
  if (!node || *node > 4095 || !bytes || *bytes == 0 || n.serial.empty()) return std::nullopt;
  for (char c : n.serial)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return std::nullopt;
  n.node = static_cast<unsigned>(*node);
  n.bytes = *bytes;
  return n;
}

std::string PoolDirName() {
  const char* env = std::getenv(kPoolDirEnv);
  if (!env || !*env) return "qlaunch-pool";
  const std::string name = env;
  if (name.find('/') != std::string::npos || name == "." || name == "..")
    throw std::runtime_error(std::string(kPoolDirEnv) + "='" + name +
                             "': expected a directory name (made under each hugetlbfs mount), not a path");
  return name;
}

std::map<uint64_t, fs::path> PoolDirs(const numa::HostTopology& host) {
  std::map<uint64_t, fs::path> out;
  const std::string name = PoolDirName();
  for (const auto& [page, mount] : host.hugetlbfs_mounts) out[page] = fs::path(mount) / name;
  return out;
}

bool PoolDir::Exists() const {
  std::error_code ec;
  return fs::is_directory(dir_, ec);
}

void PoolDir::Create() const {
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error(Errno("cannot create the pool directory " + dir_.string(), errno));
  // Root-only whoever made it first: QEMU gets its files by fd, never by path.
  if (::chmod(dir_.c_str(), 0700) != 0)
    throw std::runtime_error(Errno("cannot make " + dir_.string() + " root-only", errno));
}

UniqueFd PoolDir::Lock() const {
  return LockExclusive(dir_, LockOn::kDirectory, "the pool directory");
}

std::vector<WarmEntry> PoolDir::List() const {
  std::vector<WarmEntry> out;
  std::error_code ec;
  for (const auto& de : fs::directory_iterator(dir_, ec))
    if (auto n = ParseWarmName(de.path().filename().string())) out.push_back({de.path(), *n});
  return out;
}

unsigned PoolDir::RecoverStale() const {
  if (!Exists()) return 0;
  UniqueFd lock = Lock();
  unsigned changed = 0;
  bool orphans = false;
  for (WarmEntry e : List()) {
    if (e.name.state == WarmState::kUse && OrphanedUse(e.path)) {
      Rename(&e, WarmState::kDirty);
      ::chown(e.path.c_str(), 0, 0);  // QEMU's user may have it: root's again, like the directory
      orphans = true;
      ++changed;
      continue;
    }
    if (e.name.state != WarmState::kFill && e.name.state != WarmState::kScrub) continue;
    if (WorkerHolds(e.path)) continue;
    if (e.name.state == WarmState::kFill) {
      ::unlink(e.path.c_str());  // half filled: its pages go back
    } else {
      Rename(&e, PoolFault("trust-stale") ? WarmState::kWarm : WarmState::kDirty);
    }
    ++changed;
  }
  lock.Reset();
  if (orphans) StartScrubber(dir_.filename().string());
  return changed;
}

HeldFile PoolDir::CreateFill(unsigned node, uint64_t bytes) const {
  UniqueFd lock = Lock();
  HeldFile f;
  f.name = WarmName{WarmState::kFill, node, bytes, NewSerial()};
  f.path = dir_ / FormatWarmName(f.name);
  f.fd.Reset(::open(f.path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!f.fd.valid()) throw std::runtime_error(Errno("cannot create " + f.path.string(), errno));
  if (::flock(f.fd.get(), LOCK_EX | LOCK_NB) != 0 || ::ftruncate(f.fd.get(), static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::unlink(f.path.c_str());
    throw std::runtime_error(Errno("cannot size " + f.path.string() + " to " + std::to_string(bytes) + " bytes", err));
  }
  return f;
}

void PoolDir::MarkWarm(HeldFile* f) const {
  UniqueFd lock = Lock();
  WarmEntry e{f->path, f->name};
  Rename(&e, WarmState::kWarm);
  f->path = e.path;
  f->name = e.name;
}

void PoolDir::GiveBack(HeldFile* f) const {
  UniqueFd lock = Lock();
  ::unlink(f->path.c_str());
  f->fd.Reset();
}

std::optional<HeldFile> PoolDir::Claim(unsigned node, uint64_t bytes) const {
  if (!Exists()) return std::nullopt;
  RecoverStale();
  UniqueFd lock = Lock();
  std::optional<WarmEntry> best;
  for (const WarmEntry& e : List())
    if (e.name.state == WarmState::kWarm && e.name.node == node && e.name.bytes >= bytes &&
        (!best || e.name.bytes < best->name.bytes))
      best = e;
  if (!best) return std::nullopt;
  HeldFile f;
  f.fd.Reset(::open(best->path.c_str(), O_RDWR | O_CLOEXEC));
  if (!f.fd.valid()) throw std::runtime_error(Errno("cannot open " + best->path.string(), errno));
  Rename(&*best, WarmState::kUse);
  if (best->name.bytes > bytes) {  // cut down: the pages past `bytes` go back to the kernel
    if (::ftruncate(f.fd.get(), static_cast<off_t>(bytes)) != 0)
      throw std::runtime_error(Errno("cannot cut " + best->path.string() + " down", errno));
    Rename(&*best, WarmState::kUse, bytes);
  }
  f.path = best->path;
  f.name = best->name;
  return f;
}

std::optional<HeldFile> PoolDir::TakeDirty() const {
  if (!Exists()) return std::nullopt;
  RecoverStale();
  UniqueFd lock = Lock();
  for (WarmEntry e : List()) {
    if (e.name.state != WarmState::kDirty) continue;
    HeldFile f;
    f.fd.Reset(::open(e.path.c_str(), O_RDWR | O_CLOEXEC));
    if (!f.fd.valid()) continue;
    if (OpenElsewhere(f.fd.get())) continue;  // a file in use is never scrubbed
    Rename(&e, WarmState::kScrub);
    if (::flock(f.fd.get(), LOCK_EX | LOCK_NB) != 0) throw std::runtime_error(Errno("cannot lock " + e.path.string(), errno));
    f.path = e.path;
    f.name = e.name;
    return f;
  }
  return std::nullopt;
}

std::vector<WarmEntry> PoolDir::Drain() const {
  std::vector<WarmEntry> gone;
  if (!Exists()) return gone;
  RecoverStale();
  UniqueFd lock = Lock();
  for (const WarmEntry& e : List()) {
    if (e.name.state != WarmState::kWarm && e.name.state != WarmState::kDirty) continue;
    if (e.name.state == WarmState::kDirty) {  // one being released right now is not ours to take
      UniqueFd fd(::open(e.path.c_str(), O_RDONLY | O_CLOEXEC));
      if (fd.valid() && OpenElsewhere(fd.get())) continue;
    }
    if (::unlink(e.path.c_str()) == 0) gone.push_back(e);
  }
  return gone;
}

std::string WarmRecordLine(const fs::path& file, const std::string& backend_id) {
  return file.string() + "\t" + backend_id + "\n";
}

namespace {
bool IsWarmRecord(const std::string& name) { return name == "pool" || name.starts_with("pool."); }
}  // namespace

std::map<std::string, fs::path> DomainWarmFiles(const fs::path& domain_dir) {
  std::map<std::string, fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(domain_dir, ec)) {
    if (!IsWarmRecord(e.path().filename().string())) continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line))
      if (const size_t tab = line.find('\t'); tab != std::string::npos) out[line.substr(tab + 1)] = line.substr(0, tab);
  }
  return out;
}

void ReleaseDomainWarmFiles(const fs::path& list_file) {
  std::ifstream in(list_file);
  if (!in) return;
  std::set<std::string> dirty_dirs;  // the pools' directory names, for the scrubber
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const fs::path p(line.substr(0, line.find('\t')));
    auto n = ParseWarmName(p.filename().string());
    if (!n || n->state != WarmState::kUse) continue;
    PoolDir dir(p.parent_path());
    if (!dir.Exists()) continue;
    try {
      // renamed only under the directory's lock, as every other change of state
      const UniqueFd lock = LockExclusive(dir.path(), LockOn::kDirectory, "the pool directory");
      WarmEntry e{p, *n};
      std::error_code ec;
      if (!fs::exists(p, ec)) continue;
      Rename(&e, WarmState::kDirty);
      ::chown(e.path.c_str(), 0, 0);  // QEMU's user had it; root's again, like the directory
      dirty_dirs.insert(p.parent_path().filename().string());
    } catch (const std::exception&) {
      // left in use (unlockable or not renamed): `pool status` shows it, `pool drain` says so
    }
  }
  for (const std::string& name : dirty_dirs) StartScrubber(name);
}

void StartScrubber(const std::string& pool_dir_name) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.filename().string().ends_with("_test")) return;  // a test binary: `pool scrub` is run by hand
  // Its environment is ours, with the pool named: the files' own, whatever this process was told.
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e)
    if (!std::string_view(*e).starts_with(std::string(kPoolDirEnv) + "=")) env_strings.emplace_back(*e);
  if (!pool_dir_name.empty()) env_strings.push_back(std::string(kPoolDirEnv) + "=" + pool_dir_name);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return;  // the files stay dirty: the next `pool scrub` or `pool fill` takes them
  if (child == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);  // the scrubber is nobody's child: it outlives whoever ended the domain
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
      if (null > 2) ::close(null);
    }
    ::close_range(3, ~0u, 0);
    sched_param sp{};
    ::sched_setscheduler(0, SCHED_IDLE, &sp);
    ::setpriority(PRIO_PROCESS, 0, 19);
    ::execle(exe.c_str(), "qlaunch", "pool", "scrub", static_cast<char*>(nullptr), envp.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace qlaunch::launcher
