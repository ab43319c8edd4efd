#include "launcher/lifecycle/move/save.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "launcher/lifecycle/move/migration_poll.h"
#include "launcher/lifecycle/move/save_file.h"
#include "launcher/lifecycle/observe/domain_xml.h"
#include "launcher/lifecycle/session/destroy.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "launcher/lifecycle/start/migration_settings.h"
#include "launcher/lifecycle/start/start_interrupt.h"

namespace qlaunch::launcher {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kFdName = "qlaunch-save";

// The guest's RAM as QEMU counts it: its boot memory and the memory plugged since (DIMMs, what a
// virtio-mem device has plugged).
uint64_t GuestRamBytes(qemu::QmpClient& qmp, std::chrono::milliseconds timeout) {
  const json m = qmp.Execute("query-memory-size-summary", nullptr, timeout);
  return m.value("base-memory", uint64_t{0}) + m.value("plugged-memory", uint64_t{0});
}

double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// FILE while it is written: removed unless Keep() (the save is complete).
class SaveFileGuard {
 public:
  explicit SaveFileGuard(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error("cannot create " + path_ + ": " + std::strerror(errno));
  }
  ~SaveFileGuard() {
    if (fd_ >= 0) ::close(fd_);
    if (!kept_) ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  void PWrite(const std::string& bytes, uint64_t offset) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) Fail("write");
      done += static_cast<size_t>(n);
    }
  }
  uint64_t Size() {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) Fail("stat");
    return static_cast<uint64_t>(st.st_size);
  }
  void SeekTo(uint64_t offset) {
    if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) Fail("seek");
  }
  void Sync() {
    if (::fsync(fd_) != 0) Fail("fsync");
    if (::close(fd_) != 0) Fail("close");
    fd_ = -1;
  }
  void Keep() { kept_ = true; }

 private:
  [[noreturn]] void Fail(const char* what) {
    throw std::runtime_error(std::string("cannot write ") + path_ + ": " + what + ": " + std::strerror(errno));
  }
  std::string path_;
  int fd_ = -1;
  bool kept_ = false;
};

}  // namespace

SaveReport SaveDomain(const StateDir& state, const SaveOptions& o) {
  const auto begin = Clock::now();
  SaveReport r;
  r.name = o.name;
  r.file = o.file;
  SaveHeader header;
  header.xml = LiveDomainXmlOf(state, o.name, Verb::kSave);  // its own QMP session, closed again
  StartInterrupt interrupt;  // SIGINT/SIGTERM: cancel the save, not the process
  DomainSession s = OpenDomainSession(state, o.name, Verb::kSave, o.qmp_timeout);
  qemu::QmpClient& qmp = *s.qmp;
  r.state = qmp.Execute("query-status", nullptr, o.qmp_timeout).value("status", "");
  RefuseIfDisksReleased("save", o.name, r.state);
  if (r.state != "running" && r.state != "paused")
    throw std::runtime_error("domain " + o.name + " cannot be saved while QEMU says it is " + r.state);
  header.ran = r.state == "running";
  std::optional<MigratingMark> mark(std::in_place, state.DomainDir(o.name));

  std::optional<SaveFileGuard> file(std::in_place, o.file);
  const std::string head = EncodeSaveHeader(header);
  file->PWrite(head, 0);
  file->SeekTo(head.size());  // QEMU writes from the fd's offset, which its copy shares
  // From `stop` on, a failure resumes a guest that ran.
  struct Resume {
    qemu::QmpClient* qmp = nullptr;  // set: cont on the way out
    std::chrono::milliseconds timeout;
    ~Resume() {
      if (!qmp) return;
      try {
        qmp->Execute("cont", nullptr, timeout);
      } catch (const std::exception&) {
      }
    }
  } resume{nullptr, o.qmp_timeout};
  if (header.ran) {
    qmp.Execute("stop", nullptr, o.qmp_timeout);
    resume.qmp = &qmp;
  }
  const auto save_begin = Clock::now();
  qmp.ExecuteWithFd("getfd", {{"fdname", kFdName}}, file->fd(), o.qmp_timeout);
  // Every page goes into FILE: x-ignore-shared off whatever an earlier migration left (a QEMU that
  // came in by `migrate --local` has it on), no return path (a file cannot answer).
  SourceMigrationSettings settings(qmp, MigrationSettings{}, o.qmp_timeout);
  const uint64_t guest_ram = GuestRamBytes(qmp, o.qmp_timeout);
  qmp.Execute("migrate", {{"uri", std::string("fd:") + kFdName}}, o.qmp_timeout);
  MigrationWait w;
  w.begin = save_begin;
  w.progress = o.progress ? "save" : nullptr;
  w.qmp_timeout = o.qmp_timeout;
  MigrationOutcome out = WaitForMigration(qmp, interrupt, w);
  const auto fail = [&] {
    file.reset();
    throw std::runtime_error(MigrationFailure("save of domain " + o.name + " to " + o.file, out) + "; " + o.file +
                             " removed, the domain stays " + (header.ran ? "running" : "paused"));
  };
  if (!out.completed()) fail();
  // A stream that left the guest's RAM out cannot be restored: QEMU's own count of the RAM it
  // went through must cover the guest's (its ROMs and video memory come on top).
  const uint64_t ram_total = out.info.value("ram", json::object()).value("total", uint64_t{0});
  if (ram_total < guest_ram) {
    out.why_cancelled = "QEMU's stream covers " + std::to_string(ram_total >> 20) + " MiB of RAM, the guest has " +
                        std::to_string(guest_ram >> 20) + " MiB";
    fail();
  }
  r.file_bytes = file->Size();
  r.stream_bytes = r.file_bytes - head.size();
  file->PWrite(EncodeSaveLength(r.stream_bytes), kSaveLengthOffset);
  file->Sync();
  // A signal that came while QEMU finished its stream or while it went to disk still cancels the
  // save: until the domain is destroyed below, nothing is lost by going back.
  if (int sig = interrupt.signal()) {
    out.why_cancelled = InterruptedBy(sig);
    fail();
  }
  file->Keep();
  r.save_ms = MsSince(save_begin);
  // The guest is in FILE; this QEMU (postmigrate) and all it holds go, as after destroy.
  resume.qmp = nullptr;
  settings.Release();
  s.qmp.reset();
  DestroyDomain(state, o.name);
  mark.reset();
  r.wall_ms = MsSince(begin);
  return r;
}

json ToJson(const SaveReport& r) {
  return json{{"name", r.name},           {"file", r.file},         {"state", r.state},
              {"file_bytes", r.file_bytes}, {"stream_bytes", r.stream_bytes}, {"save_ms", r.save_ms},
              {"wall_ms", r.wall_ms}};
}

}  // namespace qlaunch::launcher
