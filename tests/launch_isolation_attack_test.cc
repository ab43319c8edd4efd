// Eight attacks from one domain's QEMU on another's: refused with leased ids, reaching when ids are shared.
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/uid_lease.h"
#include "support/isolation_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const kAttacks[] = {"maps", "mem", "process_vm_readv", "memfd", "signal", "ptrace", "disk", "environ"};

TEST_F(LaunchIsolationTest, FromOneDomainsQemuEveryAttackOnAnotherIsRefused) {
  const pid_t a = Start(Domain("iso-a")), b = Start(Domain("iso-b"));
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  ExpectUnprivileged(a);
  ExpectUnprivileged(b);
  ASSERT_NE(QemuIdOf(a), QemuIdOf(b)) << "two domains, one uid";
  const auto outcome = Attack(a, b, Image("iso-b"));
  for (const char* attack : kAttacks) {
    ASSERT_TRUE(outcome.count(attack)) << attack << ": " << Describe(outcome);
    EXPECT_NE(outcome.at(attack), "reached") << attack << ": " << Describe(outcome);
  }
  // The errnos, for the record (the test log) and as the kernel gives them today: B's /proc
  // entries are not even there for A (its /proc has hidepid=invisible), the rest is refused by
  // the uid.
  std::printf("isolated: %s\n", Describe(outcome).c_str());
  for (const char* hidden : {"maps", "mem", "memfd", "environ"}) EXPECT_EQ(outcome.at(hidden), "ENOENT") << hidden;
  EXPECT_EQ(outcome.at("process_vm_readv"), "EPERM") << Describe(outcome);
  EXPECT_EQ(outcome.at("ptrace"), "EPERM") << Describe(outcome);
  EXPECT_EQ(outcome.at("signal"), "EPERM") << Describe(outcome);
  EXPECT_EQ(outcome.at("disk"), "EACCES") << Describe(outcome);

  // A's mount namespace: a /dev of a few nodes (TCG: no kvm), a /proc with hidepid.
  std::set<std::string> dev;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(a) + "/root/dev")) dev.insert(e.path().filename());
  for (const std::string& n : dev)
    EXPECT_TRUE(std::set<std::string>({"fd", "full", "null", "ptmx", "pts", "random", "stderr", "stdin", "stdout",
                                       "urandom", "zero", "vhost-net", "hugepages", "hugepages1G"})
                    .count(n))
        << "/dev/" << n << " in QEMU's private /dev";
  EXPECT_FALSE(dev.count("kvm"));
  EXPECT_NE(Slurp("/proc/" + std::to_string(a) + "/mountinfo").find("hidepid=invisible"), std::string::npos);
  // dominfo and list say so.
  RunResult info = Qlaunch({"dominfo", "--json", "iso-a"});
  ASSERT_EQ(info.exit_code, 0) << info.Describe();
  const json di = json::parse(info.out);
  EXPECT_EQ(di["uid"], std::stoul(QemuIdOf(a)));
  EXPECT_EQ(di["gid"], std::stoul(QemuIdOf(a)));
  EXPECT_EQ(di["leased"], true);
  EXPECT_EQ(di["namespaces"], json::array({"mnt"}));
  RunResult list = Qlaunch({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  for (const json& d : json::parse(list.out)) {
    EXPECT_EQ(d["uid"], std::stoul(QemuIdOf(d["pid"].get<pid_t>()))) << d.dump();
    EXPECT_EQ(d["namespaces"], json::array({"mnt"})) << d.dump();
  }

  // B from A's side reaches nothing; B still runs, untouched.
  EXPECT_FALSE(PidGone(b));
  EXPECT_EQ(Qlaunch({"destroy", "iso-a"}).exit_code, 0);
  EXPECT_EQ(Qlaunch({"destroy", "iso-b"}).exit_code, 0);
  ExpectNothingOwnedByTheRange({StateDir(), tmp() / "images"});
  EXPECT_EQ(launcher::IdsHeldUnder("/"), std::vector<uint32_t>{}) << "leases left in the private registry";
  ExpectNothingLeft("iso-b", free_before_);
}

// The switch: with isolation off every domain's QEMU is qlaunch-qemu, as before, and the same
// attacks reach. This is what the test above would see if the leased ids were lost.
TEST_F(LaunchIsolationTest, WithIsolationOffTheSameAttacksReach) {
  ASSERT_NE(::getpwnam("qlaunch-qemu"), nullptr) << "scripts/setup creates the qlaunch-qemu user";
  const Env off = {{"QLAUNCH_ISOLATION", "off"}};
  const pid_t a = Start(Domain("iso-off-a"), {}, off), b = Start(Domain("iso-off-b"), {}, off);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_EQ(QemuIdOf(a), std::to_string(::getpwnam("qlaunch-qemu")->pw_uid));
  const auto outcome = Attack(a, b, Image("iso-off-b"));
  std::printf("isolation off: %s\n", Describe(outcome).c_str());
  for (const char* attack : kAttacks) EXPECT_EQ(outcome.at(attack), "reached") << attack << ": " << Describe(outcome);
  EXPECT_FALSE(PidGone(b)) << "the ptrace attach stopped it only for a moment";
  EXPECT_EQ(Qlaunch({"destroy", "iso-off-a"}).exit_code, 0);
  EXPECT_EQ(Qlaunch({"destroy", "iso-off-b"}).exit_code, 0);
  ExpectNothingLeft("iso-off-b", free_before_);
}

// Two domains given one --user share its ids: the second start warns, and the attacks reach.
TEST_F(LaunchIsolationTest, TwoDomainsNamingOneUserAreWarnedAboutAndReachEachOther) {
  const pid_t a = Start(Domain("iso-same-a"), {"--user", "qlaunch-qemu"});
  std::string err;
  const pid_t b = Start(Domain("iso-same-b"), {"--user", "qlaunch-qemu"}, {}, &err);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_NE(err.find("warning: domain iso-same-a runs as qlaunch-qemu:qlaunch-qemu too: a guest that escapes into "
                     "either QEMU reaches the other"),
            std::string::npos)
      << err;
  // validate says so too, of a domain whose DAC <seclabel> names that user.
  std::string labelled = Slurp(Domain("iso-same-c"));
  labelled.replace(labelled.find("  <os>"), 0,
                   "  <seclabel type='static' model='dac'><label>qlaunch-qemu:qlaunch-qemu</label></seclabel>\n");
  std::ofstream(tmp() / "iso-same-c.xml") << labelled;
  RunResult validate = Qlaunch({"validate", (tmp() / "iso-same-c.xml").string()});
  EXPECT_EQ(validate.exit_code, 0) << validate.Describe();
  EXPECT_NE(validate.err.find("warning: <seclabel>: domain iso-same-a runs as qlaunch-qemu:qlaunch-qemu too"),
            std::string::npos)
      << validate.Describe();
  const auto outcome = Attack(a, b, Image("iso-same-b"));
  std::printf("one --user: %s\n", Describe(outcome).c_str());
  for (const char* attack : kAttacks) EXPECT_EQ(outcome.at(attack), "reached") << attack << ": " << Describe(outcome);
  EXPECT_EQ(Qlaunch({"destroy", "iso-same-a"}).exit_code, 0);
  EXPECT_EQ(Qlaunch({"destroy", "iso-same-b"}).exit_code, 0);
  ExpectNothingLeft("iso-same-b", free_before_);
}

}  // namespace
}  // namespace qlaunch::testing
