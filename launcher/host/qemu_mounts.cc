#include "launcher/host/qemu_mounts.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "launcher/host/file_labels.h"
#include "launcher/host/uid_lease.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

namespace {

// Does QEMU open this device itself? -accel kvm: /dev/kvm; a tap netdev without an fd:
// /dev/net/tun.
bool WantsKvm(const std::vector<std::string>& argv) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "-accel" && argv[i + 1].rfind("kvm", 0) == 0) return true;
  return false;
}

bool WantsTun(const std::vector<std::string>& argv) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "-netdev" && argv[i + 1].rfind("tap,", 0) == 0 && argv[i + 1].find(",fd=") == std::string::npos)
      return true;
  return false;
}

// Mount points of hugetlbfs file systems under /dev (/dev/hugepages, /dev/hugepages1G).
std::vector<std::string> HugetlbfsUnderDev() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mounts");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string dev, dir, type;
    fields >> dev >> dir >> type;
    if (type == "hugetlbfs" && dir.rfind("/dev/", 0) == 0 && dir.find('\\') == std::string::npos) out.push_back(dir);
  }
  return out;
}

}  // namespace

MountNamespacePlan PlanQemuMounts(const std::vector<std::string>& argv, const std::vector<std::string>& device_paths,
                                  const fs::path& staging) {
  MountNamespacePlan plan;
  plan.staging = staging.string();
  std::set<std::string> dirs;
  auto under = [&](const std::string& dev_path) { return plan.staging + dev_path.substr(4); };  // "/dev/x" -> staging/x
  auto parents = [&](const std::string& dev_path) {
    for (fs::path p = fs::path(dev_path).parent_path(); p != "/dev" && p.has_relative_path(); p = p.parent_path()) {
      if (dirs.insert(p.string()).second) plan.dirs.insert(plan.dirs.begin(), under(p.string()));
    }
  };
  auto node = [&](const std::string& dev_path) {
    struct stat st {};
    if (dev_path.rfind("/dev/", 0) != 0 || ::stat(dev_path.c_str(), &st) != 0) return;
    if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) return;
    parents(dev_path);
    plan.nodes.push_back({under(dev_path), st.st_mode, st.st_rdev, st.st_uid, st.st_gid});
  };
  for (const char* n : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) node(n);
  // ptmx: the host's devpts instance, so that a pty's name is the same on both sides. A host
  // without /dev/pts (an initramfs with a bare devtmpfs, as the NUMA lab's) has no pty to give.
  if (struct stat pts {}; ::stat("/dev/pts", &pts) == 0 && S_ISDIR(pts.st_mode)) {
    plan.nodes.push_back({under("/dev/ptmx"), S_IFCHR | 0666, makedev(5, 2), 0, 0});
    plan.dirs.push_back(under("/dev/pts"));
    plan.binds.push_back({"/dev/pts", under("/dev/pts")});
  }
  if (WantsKvm(argv)) node("/dev/kvm");
  if (WantsTun(argv)) node("/dev/net/tun");
  node("/dev/vhost-net");  // a NIC attached later may ask QEMU for vhost; it gets only the fds qlaunch hands it
  for (const std::string& p : device_paths) node(p);
  for (const std::string& mount : HugetlbfsUnderDev()) {
    parents(mount);
    plan.dirs.push_back(under(mount));
    plan.binds.push_back({mount, under(mount)});
  }
  plan.links = {{"/proc/self/fd", under("/dev/fd")},
                {"/proc/self/fd/0", under("/dev/stdin")},
                {"/proc/self/fd/1", under("/dev/stdout")},
                {"/proc/self/fd/2", under("/dev/stderr")}};
  return plan;
}

std::optional<MountNamespacePlan> QemuMountsFor(const domain::DomainDef& def, const std::vector<std::string>& argv,
                                                const fs::path& domain_dir) {
  if (::geteuid() != 0 || !IsolationOn()) return std::nullopt;
  std::vector<std::string> devices;
  for (const LabelTarget& t : LabelTargets(def))
    if (t.path.rfind("/dev/", 0) == 0) devices.push_back(t.path);
  const fs::path staging = domain_dir / "dev";
  std::error_code ec;
  fs::create_directory(staging, ec);
  if (ec) throw std::runtime_error("cannot create " + staging.string() + ": " + ec.message());
  return PlanQemuMounts(argv, devices, staging);
}

const char* EnterQemuMounts(const MountNamespacePlan& p) {
  if (::syscall(SYS_unshare, CLONE_NEWNS) != 0) return "unshare(CLONE_NEWNS)";
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return "making / a slave";
  if (::mount("tmpfs", p.staging.c_str(), "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=256") != 0)
    return "mounting the private /dev";
  for (const std::string& d : p.dirs)
    if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) return "mkdir in the private /dev";
  for (const MountNamespacePlan::Node& n : p.nodes) {
    if (::mknod(n.path.c_str(), n.mode, n.rdev) != 0) return "mknod in the private /dev";
    if (::chown(n.path.c_str(), n.uid, n.gid) != 0 || ::chmod(n.path.c_str(), n.mode & 07777) != 0)
      return "chown in the private /dev";
  }
  for (const MountNamespacePlan::Bind& b : p.binds)
    if (::mount(b.from.c_str(), b.to.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return "bind-mounting into the private /dev";
  for (const MountNamespacePlan::Link& l : p.links)
    if (::symlink(l.target.c_str(), l.path.c_str()) != 0) return "symlink in the private /dev";
  if (::mount(p.staging.c_str(), "/dev", nullptr, MS_MOVE, nullptr) != 0) return "moving the private /dev";
  // A /proc of its own that shows other users' processes to no one but root. (hidepid=2: the
  // same before Linux 5.8's names.)
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") != 0 &&
      ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") != 0)
    return "mounting /proc with hidepid";
  return nullptr;
}

}  // namespace qlaunch::launcher
