#include "launcher/host/cgroup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

std::string ReadLine(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

bool WriteValue(const fs::path& p, const std::string& value, std::string* err) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = p.string() + ": " + std::strerror(errno);
    return false;
  }
  bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  if (!ok) *err = "writing '" + value + "' to " + p.string() + ": " + std::strerror(errno);
  ::close(fd);
  return ok;
}

bool HasWord(const std::string& words, const std::string& word) {
  std::istringstream in(words);
  for (std::string w; in >> w;)
    if (w == word) return true;
  return false;
}

}  // namespace

CgroupCpuset PlanCgroupCpuset(const domain::DomainDef& def, const qemu::LaunchPlan& plan) {
  CgroupCpuset c;
  if (def.cputune.emulatorpin) c.cpus = c.cpus.Union(*def.cputune.emulatorpin);
  for (const auto& pin : def.cputune.vcpupins) c.cpus = c.cpus.Union(pin.cpuset);
  if (!c.cpus.Empty())
    for (const auto& ctx : plan.contexts) c.cpus = c.cpus.Union(ctx.cpus);
  if (def.numatune.nodeset) {
    c.mems = *def.numatune.nodeset;
    for (const auto& m : def.numatune.memnodes) c.mems = c.mems.Union(m.nodeset);
    for (const auto& b : plan.backends) c.mems = c.mems.Union(b.host_nodes);
  }
  return c;
}

std::optional<fs::path> Cgroup2Mount() {
  std::ifstream in("/proc/self/mounts");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string dev, dir, type;
    if (f >> dev >> dir >> type && type == "cgroup2") return fs::path(dir);
  }
  return std::nullopt;
}

std::optional<DomainCgroup> DomainCgroup::Create(const std::string& name, const CgroupCpuset& cpuset,
                                                 std::vector<std::string>* notes) {
  std::optional<fs::path> mount = Cgroup2Mount();
  if (!mount) {
    notes->push_back("no cgroup v2 is mounted: QEMU runs in qlaunch's cgroup, without cpuset limits");
    return std::nullopt;
  }
  const fs::path slice = *mount / "qlaunch.slice";
  std::error_code ec;
  fs::create_directory(slice, ec);
  DomainCgroup cg;
  cg.dir_ = slice / name;
  // A root's lock keeps its domain names unique, but another state root (a migration's destination
  // on this host) may run a domain of the same name: its cgroup is not ours to join. One that is
  // there but empty (left by a QEMU that was killed) is.
  for (int n = 2; !ReadLine(cg.dir_ / "cgroup.procs").empty(); ++n)
    cg.dir_ = slice / (name + "." + std::to_string(n));
  if (ec || (!fs::create_directory(cg.dir_, ec) && !fs::is_directory(cg.dir_))) {
    notes->push_back("cgroup v2 at " + mount->string() + " is not writable (" + (ec ? ec.message() : "?") +
                     "): QEMU runs in qlaunch's cgroup, without cpuset limits");
    return std::nullopt;
  }
  // QEMU is cloned into the directory; that needs the right to write its cgroup.procs.
  if (const int procs = ::open((cg.dir_ / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC); procs >= 0) {
    ::close(procs);
    cg.fd_ = ::open(cg.dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (cg.fd_ < 0) {
    notes->push_back("cannot open " + (cg.dir_ / "cgroup.procs").string() + " (" + std::strerror(errno) +
                     "): QEMU runs in qlaunch's cgroup");
    ::rmdir(cg.dir_.c_str());
    return std::nullopt;
  }
  if (cpuset.cpus.Empty() && cpuset.mems.Empty()) return cg;

  std::string err;
  if (!HasWord(ReadLine(*mount / "cgroup.controllers"), "cpuset")) {
    notes->push_back("cgroup v2 at " + mount->string() +
                     " has no cpuset controller (bound to cgroup v1 on this host?): QEMU runs in " + cg.dir_.string() +
                     " without cpuset.cpus/cpuset.mems");
    return cg;
  }
  // Enabling cpuset in the domain's cgroup needs it in every parent's subtree_control.
  for (const fs::path& parent : {*mount, slice})
    if (!HasWord(ReadLine(parent / "cgroup.subtree_control"), "cpuset") &&
        !WriteValue(parent / "cgroup.subtree_control", "+cpuset", &err)) {
      notes->push_back("cannot enable the cpuset controller (" + err + "): QEMU runs in " + cg.dir_.string() +
                       " without cpuset limits");
      return cg;
    }
  if (!cpuset.cpus.Empty() && !WriteValue(cg.dir_ / "cpuset.cpus", cpuset.cpus.ToString(), &err))
    notes->push_back("cpuset.cpus not set: " + err);
  if (!cpuset.mems.Empty() && !WriteValue(cg.dir_ / "cpuset.mems", cpuset.mems.ToString(), &err))
    notes->push_back("cpuset.mems not set: " + err);
  return cg;
}

DomainCgroup::DomainCgroup(DomainCgroup&& o) noexcept : dir_(std::move(o.dir_)), fd_(o.fd_) { o.fd_ = -1; }

DomainCgroup::~DomainCgroup() {
  if (fd_ >= 0) ::close(fd_);
}

void RemoveCgroup(const fs::path& dir) {
  for (int i = 0; i < 100; ++i) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the last threads are still exiting
  }
}

}  // namespace qlaunch::launcher
