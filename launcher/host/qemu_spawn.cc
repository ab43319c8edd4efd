#include "launcher/host/qemu_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "launcher/host/spawn_child.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

bool FdInUse(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

std::string SignalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : std::to_string(sig);
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + SignalName(WTERMSIG(status)) + ")";
  return "ended (wait status " + std::to_string(status) + ")";
}

}  // namespace

int FreeFdBlock(int from, int count) {
  for (int n = std::max(from, 0);; ++n) {
    int i = 0;
    while (i < count && !FdInUse(n + i)) ++i;
    if (i == count) return n;
    n += i;  // the first busy one; continue after it
  }
}

FdReservation::FdReservation(int first, int count) {
  for (int fd = first; fd < first + count; ++fd)
    if (FdInUse(fd))
      throw std::runtime_error("cannot reserve fd " + std::to_string(fd) + " for a memfd QEMU inherits: it is in use");
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0 && null_fd < first + count) {  // it took one of our numbers: move it above
    int above = ::fcntl(null_fd, F_DUPFD_CLOEXEC, first + count);
    ::close(null_fd);
    null_fd = above;
  }
  if (null_fd < 0) throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  for (int fd = first; fd < first + count; ++fd) {
    if (FdInUse(fd) || ::dup3(null_fd, fd, O_CLOEXEC) < 0) {
      ::close(null_fd);
      Close();
      throw std::runtime_error("cannot reserve fd " + std::to_string(fd) + " for a memfd QEMU inherits: it is in use");
    }
    fds_.push_back(fd);
  }
  ::close(null_fd);
}

FdReservation::FdReservation(FdReservation&& o) noexcept : fds_(std::move(o.fds_)) { o.fds_.clear(); }

FdReservation& FdReservation::operator=(FdReservation&& o) noexcept {
  if (this != &o) {
    Close();
    fds_ = std::move(o.fds_);
    o.fds_.clear();
  }
  return *this;
}

FdReservation::~FdReservation() { Close(); }

void FdReservation::Place(int target, int fd) {
  if (std::find(fds_.begin(), fds_.end(), target) == fds_.end())
    throw std::logic_error("fd " + std::to_string(target) + " is not reserved");
  if (::dup3(fd, target, O_CLOEXEC) < 0)
    throw std::runtime_error("dup3 onto fd " + std::to_string(target) + ": " + std::strerror(errno));
}

void FdReservation::Close() {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

struct QemuProcess::Impl {
  pid_t pid = 0;
  std::mutex mu;
  bool reaped = false;
  bool detached = false;
  std::string exit_description;

  void ReapLocked(int status) {
    reaped = true;
    exit_description = DescribeStatus(status);
  }
};

QemuProcess::QemuProcess(std::unique_ptr<Impl> impl) : impl_(std::move(impl)), pid_(impl_->pid) {
  ref_ = RefOf(pid_);
}

std::unique_ptr<QemuProcess> QemuProcess::Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw std::invalid_argument("QemuProcess::Spawn: empty argv");
  const pid_t pid = CloneAndExec(spec);
  auto impl = std::make_unique<Impl>();
  impl->pid = pid;
  return std::unique_ptr<QemuProcess>(new QemuProcess(std::move(impl)));
}

QemuProcess::~QemuProcess() {
  if (impl_ && !impl_->detached) Kill();
}

std::optional<std::string> QemuProcess::ExitDescription() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->reaped) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) impl_->ReapLocked(status);
    else if (r < 0 && errno == ECHILD) {  // not ours to wait for (should not happen)
      impl_->reaped = true;
      impl_->exit_description = "is gone";
    }
  }
  if (!impl_->reaped) return std::nullopt;
  return impl_->exit_description;
}

void QemuProcess::Kill() {
  std::lock_guard lock(impl_->mu);
  if (impl_->reaped) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  if (r == pid_) impl_->ReapLocked(status);
  else impl_->reaped = true;
}

void QemuProcess::SendKill() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->reaped && !impl_->detached) ::kill(pid_, SIGKILL);
}

void QemuProcess::Detach() {
  std::lock_guard lock(impl_->mu);
  impl_->detached = true;
}

std::string LogTail(const fs::path& log, size_t max_lines, size_t max_bytes) {
  std::ifstream in(log, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(max_bytes) ? size - max_bytes : 0;
  in.seekg(start);
  std::string text(static_cast<size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t pos = text.size();
  for (size_t lines = 0; lines < max_lines && pos != std::string::npos && pos > 0; ++lines)
    pos = text.rfind('\n', pos - 1);
  if (pos != std::string::npos && pos < text.size() && text[pos] == '\n') ++pos;
  if (pos == std::string::npos) pos = 0;
  return text.substr(pos);
}

size_t SetProcessAffinity(pid_t pid, const IdSet& cpus) {
  CpuMask mask(cpus);
  if (!mask.set) throw std::invalid_argument("SetProcessAffinity: empty CPU set");
  size_t changed = 0;
  std::string first_error;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    pid_t tid = static_cast<pid_t>(std::strtol(it->path().filename().c_str(), nullptr, 10));
    if (tid <= 0) continue;
    if (::sched_setaffinity(tid, mask.bytes, mask.set) == 0) ++changed;
    else if (errno != ESRCH && first_error.empty()) first_error = std::strerror(errno);
  }
  if (changed == 0)
    throw std::runtime_error("cannot set the CPU affinity of pid " + std::to_string(pid) + " to " + cpus.ToString() +
                             ": " + (first_error.empty() ? "no threads" : first_error));
  return changed;
}

}  // namespace qlaunch::launcher
