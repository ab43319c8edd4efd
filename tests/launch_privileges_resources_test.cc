// What an unprivileged QEMU holds: its memory backing dirs, a memlock limit for <locked/>, its cgroup.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include "support/hardware.h"
#include "support/privileges_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> Cgroup2MountForTest() {
  std::ifstream in("/proc/self/mounts");
  for (std::string dev, dir, type, rest; in >> dev >> dir >> type && std::getline(in, rest);)
    if (type == "cgroup2") return fs::path(dir);
  return std::nullopt;
}

// File-backed guest memory: each domain's directory (<state>/.ram/<name> for ordinary pages,
// <hugetlbfs>/qlaunch/<name> for hugepages) belongs to QEMU's user, mode 0700, while it runs and
// goes with the domain.
TEST_F(LaunchPrivilegesTest, MemoryBackingDirsBelongToQemuAndGoWithTheDomain) {
  HugepagePool pool = HugepagePool::AtLeast(40);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  struct Case {
    const char* name;
    const char* backing;
    fs::path dir;
  } cases[] = {
      {"priv-file-ram", "<memoryBacking><source type='file'/><access mode='shared'/></memoryBacking>",
       StateDir() / ".ram" / "priv-file-ram"},
      {"priv-file-huge", "<memoryBacking><hugepages/></memoryBacking>", "/dev/hugepages/qlaunch/priv-file-huge"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pid_t pid = Start(DiskXml(c.name, Image(std::string(c.name) + ".img"), false, std::string("  ") + c.backing + "\n"));
    ASSERT_GT(pid, 0);
    ExpectUnprivileged(pid);
    EXPECT_EQ(Owner(c.dir), Leased(pid) + " 0700");
    std::string cmdline = Slurp("/proc/" + std::to_string(pid) + "/cmdline");
    EXPECT_NE(cmdline.find("\"mem-path\":\"" + c.dir.string() + "\""), std::string::npos) << cmdline;
    EXPECT_EQ(Qlaunch({"destroy", c.name}).exit_code, 0);
    EXPECT_FALSE(fs::exists(c.dir));
  }
}

// <locked/>: an unprivileged QEMU may mlock only within RLIMIT_MEMLOCK. Where this host lets
// root raise it, QEMU runs with a limit of guest memory + 1 GiB; where it does not (containers),
// the start fails in the pre-flight naming <memoryBacking>, before anything exists.
// <locked/>: where root may raise RLIMIT_MEMLOCK, QEMU gets guest memory + 1 GiB of it.
TEST_F(LaunchPrivilegesTest, LockedMemoryGetsAMemlockLimit) {
  QLAUNCH_SKIP_WITHOUT_HARDWARE("memlock-raise");
  const std::string xml = DiskXml("priv-locked", Image("l.img"), false,
                                  "  <memoryBacking><locked/></memoryBacking>\n");
  const uint64_t need = (64ull << 20) + (1ull << 30);
  RunResult r = Qlaunch({"start", "--json", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  pid_t pid = nlohmann::json::parse(r.out).at("pid").get<pid_t>();
  ExpectUnprivileged(pid);
  std::ifstream limits("/proc/" + std::to_string(pid) + "/limits");
  std::string line, memlock;
  while (std::getline(limits, line))
    if (line.rfind("Max locked memory", 0) == 0) memlock = line;
  EXPECT_NE(memlock.find(std::to_string(need)), std::string::npos) << memlock;
  EXPECT_EQ(Qlaunch({"destroy", "priv-locked"}).exit_code, 0);
}

// ... and where it may not, a clear refusal before anything exists. Made real on every host: a
// low hard limit, and qlaunch run without CAP_SYS_RESOURCE (setpriv drops it from the inheritable
// and bounding sets, so root's exec does not get it back).
TEST_F(LaunchPrivilegesTest, LockedMemoryWithoutAMemlockLimitIsRefused) {
  const std::string xml = DiskXml("priv-locked", Image("l.img"), false,
                                  "  <memoryBacking><locked/></memoryBacking>\n");
  const uint64_t need = (64ull << 20) + (1ull << 30);
  const uint64_t free_before = HugepagesFree();
  RunResult r = RunningProcess({"/usr/bin/prlimit", "--memlock=65536:65536", "/usr/bin/setpriv",
                                "--inh-caps=-sys_resource", "--bounding-set=-sys_resource", "--", QlaunchBinary(),
                                "start", "--json", xml},
                               BaseEnv())
                    .Wait();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(xml + ":6: error: <memoryBacking>: <locked/>: QEMU's user +"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find(" needs RLIMIT_MEMLOCK of " + std::to_string(need) + " bytes"),
            std::string::npos)
      << r.Describe();
  EXPECT_NE(r.err.find("the hard limit is 65536 bytes"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("--user root"), std::string::npos) << r.Describe();
  ExpectNothingLeft("priv-locked", free_before);
}

// QEMU joins <cgroup2>/qlaunch.slice/<name> before exec; the cgroup goes with the domain, also
// after kill -9 of QEMU (at the next list). Where the hierarchy has no cpuset controller (this
// machine binds cpuset to cgroup v1), start --json says so in a note; the limit itself is
// CgroupCpusetLimitsQemu's, skipped for that missing hardware.
TEST_F(LaunchPrivilegesTest, QemuRunsInItsOwnCgroupRemovedWithTheDomain) {
  std::optional<fs::path> mount = Cgroup2MountForTest();
  ASSERT_TRUE(mount) << "no cgroup v2 mounted here";
  const std::string xml = DiskXml("priv-cg", Image("cg.img"), false, "  <cputune><emulatorpin cpuset='0'/></cputune>\n");
  RunResult r = Qlaunch({"start", "--json", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  nlohmann::json report = nlohmann::json::parse(r.out);
  const pid_t pid = report.at("pid").get<pid_t>();
  const fs::path cg = *mount / "qlaunch.slice" / "priv-cg";
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line, v2;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
  EXPECT_EQ(v2, "/qlaunch.slice/priv-cg");
  EXPECT_TRUE(fs::is_directory(cg));
  const bool has_cpuset = MissingHardware("cpuset").empty();
  EXPECT_EQ(report["notes"].dump().find("has no cpuset controller") == std::string::npos, has_cpuset)
      << report.dump();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 500 && !PidGone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Qlaunch({"list", "--json"}).out, "[]\n");
  EXPECT_FALSE(fs::exists(cg)) << "the cgroup outlived its domain";
}

// <emulatorpin> becomes the domain cgroup's cpuset.cpus where the controller exists.
TEST_F(LaunchPrivilegesTest, CgroupCpusetLimitsQemu) {
  QLAUNCH_SKIP_WITHOUT_HARDWARE("cpuset");
  std::optional<fs::path> mount = Cgroup2MountForTest();
  ASSERT_TRUE(mount);
  const std::string xml = DiskXml("priv-cs", Image("cs.img"), false, "  <cputune><emulatorpin cpuset='0'/></cputune>\n");
  RunResult r = Qlaunch({"start", "--json", xml});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::ifstream cpus(*mount / "qlaunch.slice" / "priv-cs" / "cpuset.cpus");
  std::string set;
  std::getline(cpus, set);
  EXPECT_EQ(set, "0");
  EXPECT_EQ(Qlaunch({"destroy", "priv-cs"}).exit_code, 0);
}

}  // namespace
}  // namespace qlaunch::testing
