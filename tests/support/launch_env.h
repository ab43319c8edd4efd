// Shared ground for the real-QEMU launch tests (tests/launch_*_test.cc): a temporary
// QLAUNCH_STATE_DIR and capability cache per test, small domain XMLs, and checks of the host
// after the fact (processes, memfds, hugepages, state directory). What they look at in the host's
// processes is support/host_processes.h, included here for every launch test.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/host_processes.h"
#include "support/hugepages.h"
#include "support/qlaunch_run.h"

namespace qlaunch::testing {

inline constexpr const char* kQemu72 = "/usr/bin/qemu-system-x86_64";
inline constexpr const char* kQemu52 = "/opt/qlaunch/qemu-5.2/bin/qemu-system-x86_64";

// "" when `binary` runs and reports "QEMU emulator version <major.minor>...", else why not.
std::string CheckQemuVersion(const std::string& binary, const std::string& major_minor);
// "" when a test can run QEMU 7.2 on 2 MiB hugepages here (QEMU 7.2 installed, root for the pool
// and QEMU's user, 2 MiB default pages), else why not: a reason for GTEST_SKIP.
std::string WhyNoHugepageQemu72();

struct SmallDomain {
  std::string name = "qlaunch-it";
  unsigned cells = 2;
  unsigned cell_mib = 64;      // per cell, on 2 MiB hugepages, shared memfd, bound to host node 0
  unsigned page_mib = 2;       // the hugepage size (1024: 1 GiB pages)
  std::string access = "shared";
  std::string machine = "pc";
  std::string type;            // "" = kvm when /dev/kvm is usable, else qemu (TCG)
  std::string emulator;        // <emulator>; "" = none
  std::string os_extra;        // more of <os> after <type> (a booted guest's <kernel>, ...)
  std::string devices_extra;   // more <devices> before <memballoon model='none'/>
  unsigned vcpus_per_cell = 1;  // cell c has vCPUs c*N .. c*N+N-1 (one socket each)
  unsigned current_vcpus = 0;   // <vcpu current>; 0 = all run
  std::string features;         // <features> children, e.g. "<acpi/><apic/>" (vCPU hotplug)
  uint64_t Bytes() const { return uint64_t{cells} * cell_mib << 20; }
};
std::string SmallDomainXml(const SmallDomain& d);

bool KvmWorks();

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  const std::filesystem::path& tmp() const { return tmp_; }
  std::filesystem::path StateDir() const { return tmp_ / "state"; }
  std::filesystem::path DomainStateDir(const std::string& name) const { return StateDir() / name; }
  Env BaseEnv() const;
  // A second "host" on this machine (live migration): its own state root, <tmp>/state-HOST, as
  // the `extra` env of Qlaunch. TearDown kills and clears what runs on it as on StateDir().
  Env OtherHost(const std::string& host);
  std::filesystem::path OtherStateDir(const std::string& host) const { return tmp_ / ("state-" + host); }

  // Writes the XML to <tmp>/<name>.xml and returns its path.
  std::string WriteDomain(const SmallDomain& d);
  RunResult Qlaunch(const std::vector<std::string>& args, const Env& extra = {},
                    std::chrono::milliseconds timeout = std::chrono::minutes(2));

  // The QEMU of pid `qemu_pid` has exited and is reaped (by us, its subreaper, or already).
  void ExpectQemuGone(pid_t qemu_pid);
  // After a domain is gone: its QEMU (pid, when known) is gone and reaped, no QEMU runs on
  // our state dir, nobody holds its memfds, the free hugepages are back to `free_before`, and
  // its state directory is gone. `state_dir`: the root it ran on ("" = StateDir()).
  void ExpectHostClean(const std::string& name, pid_t qemu_pid, uint64_t free_before,
                       const std::filesystem::path& state_dir = {});
  // After a start that failed, was refused or was interrupted (QEMU's pid unknown), or at the end
  // of a test once every domain is gone: the above, no process at all runs on our state root (nor
  // on an OtherStateDir, whose path it begins), which holds no entry, and no process that qlaunch
  // started is left (they would have been re-parented to the test).
  void ExpectNothingLeft(const std::string& name, uint64_t free_before);

  // The whole life of a small domain on `qemu` with `start_flags` (e.g. --prealloc launcher):
  // start --json -> state files -> hugepages taken -> list shows it running -> a second start
  // is refused -> destroy -> ExpectHostClean -> list is empty -> destroy says not running.
  // Skips when the hugepage pool cannot be sized (not root).
  void StartListDestroy(const std::string& qemu, const std::vector<std::string>& start_flags,
                        const std::string& want_prealloc);

 private:
  std::filesystem::path tmp_;
  std::vector<std::string> other_hosts_;
};

}  // namespace qlaunch::testing
