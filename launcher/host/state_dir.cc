#include "launcher/host/state_dir.h"
#include "launcher/host/warm_pool.h"

#include "common/file_lock.h"
#include "launcher/host/cgroup.h"
#include "launcher/host/file_labels.h"
#include "launcher/host/uid_lease.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

namespace qlaunch::launcher {

namespace fs = std::filesystem;

std::optional<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void AtomicWrite(const fs::path& path, const std::string& contents) {
  fs::path tmp = path.parent_path() / ("." + path.filename().string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << contents;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot write " + path.string() + ": " + ec.message());
}

namespace {

// Reads /proc/<pid>/stat: the state letter and the start time (field 22).
bool ReadStat(pid_t pid, char* state, uint64_t* start_time) {
  if (pid <= 0) return false;
  auto text = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return false;
  size_t paren = text->rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(text->substr(paren + 1));
  std::string field;
  // Fields after "(comm)": 3 = state, ..., 22 = starttime.
  for (int index = 3; fields >> field; ++index) {
    if (index == 3) *state = field.empty() ? '?' : field[0];
    if (index == 22) {
      *start_time = std::strtoull(field.c_str(), nullptr, 10);
      return true;
    }
  }
  return false;
}

std::string PidText(const ProcessRef& ref) {
  return std::to_string(ref.pid) + " " + std::to_string(ref.start_time) + "\n";
}

void WaitGone(const ProcessRef& ref, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (ProcessAlive(ref) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace

fs::path DefaultStateRoot() {
  const char* env = std::getenv("QLAUNCH_STATE_DIR");
  if (env && *env) return env;
  return "/run/qlaunch";
}

std::optional<uint64_t> ProcessStartTime(pid_t pid) {
  char state = 0;
  uint64_t start = 0;
  if (!ReadStat(pid, &state, &start)) return std::nullopt;
  return start;
}

bool ProcessAlive(const ProcessRef& ref) {
  char state = 0;
  uint64_t start = 0;
  if (!ReadStat(ref.pid, &state, &start)) return false;
  if (ref.start_time != 0 && ref.start_time != start) return false;
  if (state == 'X' || state == 'x') return false;
  if (state == 'Z') {
    // A zombie leader whose other threads are still exiting still holds the process's memory
    // and files (they go with the last thread): alive until it is the only task left.
    std::error_code ec;
    size_t tasks = 0;
    for (fs::directory_iterator it("/proc/" + std::to_string(ref.pid) + "/task", ec), end; !ec && it != end;
         it.increment(ec))
      ++tasks;
    return tasks > 1;
  }
  return true;
}

ProcessRef RefOf(pid_t pid) { return ProcessRef{pid, ProcessStartTime(pid).value_or(0)}; }

AlreadyRunningError::AlreadyRunningError(const std::string& name, pid_t pid, bool starting)
    : std::runtime_error(starting ? "domain " + name + " is already running (being started by qlaunch pid " +
                                        std::to_string(pid) + ")"
                                  : "domain " + name + " is already running (pid " + std::to_string(pid) + ")"),
      pid_(pid) {}

void CheckDomainName(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.' || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos)
    throw std::invalid_argument("invalid domain name '" + name +
                                "': it names a state directory, so it must be non-empty, at most 200 bytes, "
                                "without '/' and not start with '.'");
}

std::optional<ProcessRef> ReadProcessRef(const fs::path& pid_file, const fs::path& start_file) {
  auto text = ReadSmallFile(pid_file);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  long long pid = 0;
  unsigned long long start = 0;
  if (!(in >> pid) || pid <= 0) return std::nullopt;
  if (!(in >> start)) {  // "pid" holds the pid alone; its start time lives beside it
    if (auto st = ReadSmallFile(start_file)) start = std::strtoull(st->c_str(), nullptr, 10);
  }
  return ProcessRef{static_cast<pid_t>(pid), start};
}

void RemoveDomainDir(const fs::path& dir) {
  RestoreLabels(dir);  // the owners of the files QEMU was given, unless another domain uses them
  if (auto list = ReadSmallFile(dir / "cleanup")) {
    std::istringstream in(*list);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      std::error_code ec;
      fs::remove_all(line, ec);
    }
  }
  // Its warm pool files are dirty now (warm_pool.h): those of its start ("pool") and of DIMMs
  // attached since ("pool.<backend id>").
  {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (const std::string n = e.path().filename().string(); n == "pool" || n.starts_with("pool."))
        ReleaseDomainWarmFiles(e.path());
  }
  if (auto cgroup = ReadSmallFile(dir / "cgroup")) {  // the domain's cgroup (launcher/host/cgroup.h)
    while (!cgroup->empty() && cgroup->back() == '\n') cgroup->pop_back();
    if (!cgroup->empty()) RemoveCgroup(*cgroup);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec && fs::exists(dir)) throw std::runtime_error("cannot remove " + dir.string() + ": " + ec.message());
  ReleaseIds(dir);  // after the files went back and the dir is gone: nothing is left owned by its ids
}

StateDir::StateDir(fs::path root) : root_(std::move(root)) {}

void StateDir::WithLock(const std::function<void()>& fn) const {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throw std::runtime_error("cannot create state directory " + root_.string() + ": " + ec.message());
  const UniqueFd lock = LockExclusive(root_, LockOn::kDirectory, "state directory");
  fn();
}

std::vector<std::string> StateDir::Names() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name.empty() || name[0] == '.' || !it->is_directory(type_ec)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

DomainStatus StateDir::Inspect(const std::string& name) const {
  fs::path dir = DomainDir(name);
  DomainStatus st;
  st.qemu = ReadProcessRef(dir / "pid", dir / "pid.start");
  st.owner = ReadProcessRef(dir / "owner", {});
  st.qemu_alive = st.qemu && ProcessAlive(*st.qemu);
  st.owner_alive = st.owner && ProcessAlive(*st.owner);
  std::error_code ec;
  st.incoming = fs::exists(dir / "incoming", ec);
  const auto migrator = ReadProcessRef(dir / "migrating", {});
  st.migrating = migrator && ProcessAlive(*migrator);
  if (st.owner)  // not committed yet: starting while its starter lives, stale once it died
    st.kind = st.owner_alive ? DomainStatus::Kind::kStarting : DomainStatus::Kind::kStale;
  else
    st.kind = st.qemu_alive ? DomainStatus::Kind::kRunning : DomainStatus::Kind::kStale;
  return st;
}

bool StateDir::RemoveIfStale(const std::string& name) const {
  DomainStatus st = Inspect(name);
  if (st.kind != DomainStatus::Kind::kStale) return false;
  if (st.qemu_alive) {  // a paused QEMU orphaned by a start that was killed: it holds memory
    ::kill(st.qemu->pid, SIGKILL);
    WaitGone(*st.qemu, std::chrono::seconds(10));
  }
  RemoveDomainDir(DomainDir(name));
  return true;
}

void StateDir::RemoveIfPid(const std::string& name, const ProcessRef& qemu) const {
  WithLock([&] {
    fs::path dir = DomainDir(name);
    auto recorded = ReadProcessRef(dir / "pid", dir / "pid.start");
    if (recorded && recorded->pid == qemu.pid && recorded->start_time == qemu.start_time) RemoveDomainDir(dir);
  });
}

StateClaim::StateClaim(StateDir root, std::string name)
    : root_(std::move(root)), name_(std::move(name)), dir_(root_.DomainDir(name_)) {}

StateClaim::StateClaim(StateClaim&& other) noexcept
    : root_(other.root_),
      name_(std::move(other.name_)),
      dir_(std::move(other.dir_)),
      cleanup_(std::move(other.cleanup_)),
      active_(other.active_) {
  other.active_ = false;
}

StateClaim StateClaim::Acquire(const StateDir& root, const std::string& name) {
  CheckDomainName(name);
  StateClaim claim(root, name);
  root.WithLock([&] {
    std::error_code ec;
    if (fs::exists(claim.dir_, ec)) {
      DomainStatus st = root.Inspect(name);
      if (st.kind == DomainStatus::Kind::kRunning)
        throw AlreadyRunningError(name, st.qemu->pid, false);
      if (st.kind == DomainStatus::Kind::kStarting) {
        if (st.qemu_alive) throw AlreadyRunningError(name, st.qemu->pid, false);
        throw AlreadyRunningError(name, st.owner->pid, true);
      }
      root.RemoveIfStale(name);
    }
    if (!fs::create_directory(claim.dir_, ec) || ec)
      throw std::runtime_error("cannot create state directory " + claim.dir_.string() + ": " +
                               (ec ? ec.message() : "it exists"));
    claim.active_ = true;
    fs::permissions(claim.dir_, fs::perms::owner_all, ec);  // the QMP socket gives full control
    AtomicWrite(claim.dir_ / "owner", PidText(RefOf(::getpid())));
  });
  return claim;
}

StateClaim::~StateClaim() {
  try {
    Release();
  } catch (...) {
  }
}

void StateClaim::WriteFile(const std::string& file, const std::string& contents) const {
  AtomicWrite(dir_ / file, contents);
}

void StateClaim::RecordQemu(const ProcessRef& qemu) const {
  AtomicWrite(dir_ / "pid.start", std::to_string(qemu.start_time) + "\n");
  AtomicWrite(dir_ / "pid", std::to_string(qemu.pid) + "\n");
}

void StateClaim::AddCleanupPath(const fs::path& path) {
  cleanup_.push_back(path);
  std::string text;
  for (const auto& p : cleanup_) text += p.string() + "\n";
  AtomicWrite(dir_ / "cleanup", text);
}

void StateClaim::Commit() {
  if (!active_) return;
  std::error_code ec;
  fs::remove(dir_ / "owner", ec);
  active_ = false;
}

void StateClaim::Release() {
  if (!active_) return;
  active_ = false;
  root_.WithLock([&] { RemoveDomainDir(dir_); });
}

}  // namespace qlaunch::launcher
