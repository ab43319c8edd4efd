// What the launch tests read of the host's processes in /proc (host_processes.h says what each means).
#include "support/host_processes.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "launcher/host/uid_lease.h"
#include "support/slurp.h"

namespace qlaunch::testing {

namespace fs = std::filesystem;

namespace {

std::vector<pid_t> AllPids() {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos) pids.push_back(std::stoi(n));
  }
  return pids;
}

}  // namespace

bool PidGone(pid_t pid) {
  std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z') return false;
  // A zombie leader is gone only once no other thread of it is still exiting.
  std::error_code ec;
  size_t tasks = 0;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end;
       it.increment(ec))
    ++tasks;
  return tasks <= 1;
}

std::vector<pid_t> LivePidsWithCmdline(const std::string& needle) {
  std::vector<pid_t> out;
  for (pid_t pid : AllPids()) {
    if (pid == ::getpid() || PidGone(pid)) continue;
    std::string cmd = Slurp("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(needle) != std::string::npos) out.push_back(pid);
  }
  return out;
}

std::vector<pid_t> PidsHoldingFd(const std::string& needle) {
  std::vector<pid_t> out;
  for (pid_t pid : AllPids()) {
    std::error_code ec;
    for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
         it.increment(ec)) {
      std::error_code lec;
      fs::path target = fs::read_symlink(it->path(), lec);
      if (!lec && target.string().find(needle) != std::string::npos) {
        out.push_back(pid);
        break;
      }
    }
  }
  return out;
}

std::vector<pid_t> LiveChildren() {
  std::vector<pid_t> out;
  const std::string self = std::to_string(::getpid());
  for (pid_t pid : AllPids()) {
    std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));
    std::string state, ppid;
    if (fields >> state >> ppid && ppid == self && state != "Z") out.push_back(pid);
  }
  return out;
}

std::map<std::string, std::string> ProcStatus(pid_t pid) {
  std::map<std::string, std::string> out;
  std::istringstream in(Slurp("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t v = line.find_first_not_of(" \t", colon + 1);
    out[line.substr(0, colon)] = v == std::string::npos ? "" : line.substr(v);
  }
  return out;
}

std::string QemuIdOf(pid_t pid) {
  std::istringstream uid(ProcStatus(pid)["Uid"]);
  std::string first;
  uid >> first;
  return first;
}

std::vector<std::string> SetprivTo(pid_t pid) {
  std::map<std::string, std::string> st = ProcStatus(pid);
  std::istringstream uid(st["Uid"]), gid(st["Gid"]), groups_in(st["Groups"]);
  std::string u, g, groups;
  uid >> u;
  gid >> g;
  for (std::string one; groups_in >> one;) groups += (groups.empty() ? "" : ",") + one;
  return {"/usr/bin/setpriv", "--reuid=" + u, "--regid=" + g, groups.empty() ? "--clear-groups" : "--groups=" + groups,
          "--"};
}

void ExpectUnprivileged(pid_t pid) {
  std::map<std::string, std::string> st = ProcStatus(pid);
  // Ids of the domain's own, leased from the range (launcher/host/uid_lease.h), not the shared
  // qlaunch-qemu of QLAUNCH_ISOLATION=off; the same number as uid and gid, in all four places.
  const std::string id = QemuIdOf(pid);
  ASSERT_FALSE(id.empty()) << "QEMU pid " << pid;
  const unsigned long n = std::stoul(id);
  const launcher::IdRange range = launcher::LeaseRange();
  EXPECT_TRUE(n >= range.first && n <= range.last) << id << " outside the lease range";
  EXPECT_TRUE(launcher::IdLeased(static_cast<uint32_t>(n))) << id << " is not in the lease registry";
  if (const passwd* pw = ::getpwnam("qlaunch-qemu")) {
    EXPECT_NE(n, pw->pw_uid) << "the shared user, not ids of its own";
  }
  EXPECT_EQ(st["Uid"], id + "\t" + id + "\t" + id + "\t" + id) << "QEMU pid " << pid;
  EXPECT_EQ(st["Gid"], id + "\t" + id + "\t" + id + "\t" + id) << "QEMU pid " << pid;
  for (const char* cap : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
    EXPECT_EQ(st[cap], "0000000000000000") << cap << " of QEMU pid " << pid;
  EXPECT_EQ(st["NoNewPrivs"], "1");
  EXPECT_EQ(st["Seccomp"], "2") << "-sandbox on installs a seccomp filter";
  // /dev/kvm through the kvm group.
  if (const group* kvm = ::getgrnam("kvm")) {
    std::string groups = " " + st["Groups"] + " ";
    EXPECT_NE(groups.find(" " + std::to_string(kvm->gr_gid) + " "), std::string::npos) << st["Groups"];
  }
}

}  // namespace qlaunch::testing
