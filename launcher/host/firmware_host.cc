// The UEFI vars of a domain (pflash1): a copy of the firmware's template, made on the first
// start and kept across starts (libvirt keeps /var/lib/libvirt/qemu/nvram/NAME_VARS.fd; qlaunch
// /var/lib/qlaunch/nvram/NAME_VARS.fd, or the XML's <nvram> path). The copy belongs to QEMU's
// user, which writes it. A vars file that existed before this start is never changed or removed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "common/diagnostic.h"
#include "launcher/host/device_host.h"
#include "qemu_cmd/machine_plan.h"

namespace qlaunch::launcher {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void Fail(const domain::DomainDef& def, std::string message) {
  int line = def.os.firmware.nvram_line ? def.os.firmware.nvram_line : def.os.line;
  throw DiagnosticError(Diagnostic{Severity::kError, def.file, line, "nvram", std::move(message)});
}

// Copies `from` to a new file `to` (O_EXCL: never over an existing one), mode 0600, root's (the
// start then labels it for QEMU's user). On failure nothing is left behind.
void CopyNew(const domain::DomainDef& def, const std::string& from, const std::string& to) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) Fail(def, "cannot read the UEFI vars template " + from + ": " + std::strerror(errno));
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (out < 0) {
    int e = errno;
    ::close(in);
    Fail(def, "cannot create the UEFI vars " + to + ": " + std::strerror(e));
  }
  std::string error;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = "cannot read " + from + ": " + std::strerror(errno);
      break;
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        error = "cannot write " + to + ": " + std::strerror(errno);
        break;
      }
      done += w;
    }
    if (!error.empty()) break;
  }
  if (error.empty() && ::fsync(out) != 0) error = "cannot write " + to + ": " + std::strerror(errno);
  ::close(in);
  if (::close(out) != 0 && error.empty()) error = "cannot write " + to + ": " + std::strerror(errno);
  if (!error.empty()) {
    ::unlink(to.c_str());
    Fail(def, error);
  }
}

class FirmwareHost : public DeviceHostPart {
 public:
  void Plan(const DeviceHostContext& ctx, qemu::DeviceResources* res, FdNumbers* fds) override {
    const domain::DomainDef& def = *ctx.def;
    qemu::FirmwarePlan fw = qemu::PlanFirmware(def, qemu::IsQ35(def.os.machine), "");
    if (fw.nvram.empty()) return;
    path_ = fw.nvram;
    res->nvram_path = path_;
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0) {
      if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) Fail(def, "the UEFI vars " + path_ + " is not a file");
      // Kept from an earlier start (or the user's own): QEMU's user must be able to write it.
      if (int e = OpenErrorAs(*ctx.user, path_, O_RDWR))
        Fail(def, "QEMU's user " + ctx.user->user + " cannot write the UEFI vars " + path_ + ": " + std::strerror(e));
      return;
    }
    if (errno != ENOENT) Fail(def, "the UEFI vars " + path_ + ": " + std::strerror(errno));
    if (fw.nvram_template.empty())
      Fail(def, "no template for the UEFI vars of loader " + fw.code + " (give <nvram template='...'>)");
    if (::access(fw.nvram_template.c_str(), R_OK) != 0)
      Fail(def, "the UEFI vars template " + fw.nvram_template + ": " + std::strerror(errno));
    template_ = fw.nvram_template;
    make_dir_ = fw.nvram_default;
    if (!make_dir_ && !fs::is_directory(fs::path(path_).parent_path()))
      Fail(def, "the directory of the UEFI vars " + path_ + " does not exist");
  }

  void Create(const DeviceHostContext& ctx, const std::function<void(int, int)>& place) override {
    if (template_.empty()) return;
    if (make_dir_) {
      std::error_code ec;
      fs::create_directories(qemu::kNvramDir, ec);
      if (ec) Fail(*ctx.def, std::string("cannot create ") + qemu::kNvramDir + ": " + ec.message());
    }
    // Root's, as the vars are at rest: the start labels it for QEMU's user like any file it opens
    // (recorded, given back at destroy), since the user (a leased uid) differs from start to start.
    CopyNew(*ctx.def, template_, path_);
    created_ = true;
  }

  void Undo() noexcept override {
    if (created_) ::unlink(path_.c_str());
    created_ = false;
  }

  void Summary(nlohmann::json* out) const override {
    if (!path_.empty()) (*out)["nvram"] = path_;
  }

 private:
  std::string path_;      // the vars QEMU uses
  std::string template_;  // set when this start copies it
  bool make_dir_ = false;
  bool created_ = false;
};

}  // namespace

std::unique_ptr<DeviceHostPart> MakeFirmwareHost() { return std::make_unique<FirmwareHost>(); }

}  // namespace qlaunch::launcher
