#include "launcher/host/defined_domains.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "common/file_lock.h"
#include "common/unique_fd.h"
#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSuffix = ".xml";

[[noreturn]] void Fail(const std::string& what, const fs::path& path) {
  throw std::runtime_error("cannot " + what + " " + path.string() + ": " + std::strerror(errno));
}

void WriteAll(int fd, const std::string& data, const fs::path& path) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Fail("write", path);
    done += static_cast<size_t>(n);
  }
}

void SyncDir(const fs::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() >= 0) ::fsync(fd.get());
}

}  // namespace

fs::path DefaultConfigRoot() {
  const char* env = std::getenv("QLAUNCH_CONFIG_DIR");
  return env && *env ? fs::path(env) : fs::path("/etc/qlaunch/domains");
}

NotDefinedError::NotDefinedError(const std::string& name, const fs::path& file)
    : std::runtime_error("domain '" + name + "' is not defined (no " + file.string() + ")") {}

DefinedDomains::DefinedDomains(fs::path root) : root_(std::move(root)) {}

fs::path DefinedDomains::FileOf(const std::string& name) const {
  CheckDomainName(name);
  return root_ / (name + kSuffix);
}

bool DefinedDomains::IsDefined(const std::string& name) const {
  std::error_code ec;
  return fs::is_regular_file(FileOf(name), ec);
}

std::vector<std::string> DefinedDomains::Names() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.starts_with(".") || !file.ends_with(kSuffix) || file.size() == std::strlen(kSuffix)) continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    names.push_back(file.substr(0, file.size() - std::strlen(kSuffix)));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string DefinedDomains::Read(const std::string& name) const {
  const fs::path file = FileOf(name);
  if (!IsDefined(name)) throw NotDefinedError(name, file);
  std::optional<std::string> xml = ReadSmallFile(file);
  if (!xml) Fail("read", file);
  return *xml;
}

void DefinedDomains::WithLock(const std::function<void()>& fn) const {
  if (::mkdir(root_.c_str(), 0700) != 0 && errno != EEXIST) {
    std::error_code ec;  // its parents (/etc/qlaunch) are ordinary directories
    fs::create_directories(root_.parent_path(), ec);
    if (::mkdir(root_.c_str(), 0700) != 0 && errno != EEXIST) Fail("create", root_);
  }
  const UniqueFd lock = LockExclusive(root_ / ".lock", LockOn::kFile, "the domain definitions' lock");
  fn();
}

void DefinedDomains::Write(const std::string& name, const std::string& xml) const {
  const fs::path file = FileOf(name);
  const fs::path tmp = root_ / ("." + name + kSuffix + ".tmp");
  ::unlink(tmp.c_str());  // one a killed writer left
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (fd.get() < 0) Fail("create", tmp);
    try {
      WriteAll(fd.get(), xml, tmp);
      if (::fsync(fd.get()) != 0) Fail("sync", tmp);
    } catch (...) {
      ::unlink(tmp.c_str());
      throw;
    }
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    Fail("write", file);
  }
  SyncDir(root_);
}

void DefinedDomains::Remove(const std::string& name) const {
  const fs::path file = FileOf(name);
  if (!IsDefined(name)) throw NotDefinedError(name, file);
  ::unlink(AutostartLink(name).c_str());
  if (::unlink(file.c_str()) != 0) Fail("remove", file);
  SyncDir(root_);
}

fs::path DefinedDomains::AutostartLink(const std::string& name) const {
  return root_ / "autostart" / (name + kSuffix);
}

bool DefinedDomains::Autostart(const std::string& name) const {
  std::error_code ec;
  return IsDefined(name) && fs::is_symlink(AutostartLink(name), ec);
}

void DefinedDomains::SetAutostart(const std::string& name, bool on) const {
  const fs::path file = FileOf(name);
  if (!IsDefined(name)) throw NotDefinedError(name, file);
  const fs::path link = AutostartLink(name);
  if (!on) {
    if (::unlink(link.c_str()) != 0 && errno != ENOENT) Fail("remove", link);
    return;
  }
  if (::mkdir(link.parent_path().c_str(), 0700) != 0 && errno != EEXIST) Fail("create", link.parent_path());
  if (::symlink(("../" + name + kSuffix).c_str(), link.c_str()) != 0 && errno != EEXIST) Fail("create", link);
}

}  // namespace qlaunch::launcher
