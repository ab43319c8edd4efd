// The lease of a domain's ids: a range that runs out, and leases of killed starts reaped by the next command.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "launcher/host/uid_lease.h"
#include "support/isolation_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

// A range of two: a third domain is refused in the pre-flight, naming the range, and nothing of
// it is left (no state, its image untouched, no lease). Once one goes, its uid serves again.
TEST_F(LaunchIsolationTest, ALeaseRangeOfTwoRefusesTheThirdStartInThePreflight) {
  range_ = "3700100-3700101";
  ::setenv("QLAUNCH_UID_RANGE", range_.c_str(), 1);
  const pid_t a = Start(Domain("iso-r1")), b = Start(Domain("iso-r2"));
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  const std::string third = Domain("iso-r3");
  RunResult r = Qlaunch({"start", third});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("no free uid in the lease range 3700100-3700101"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("widen QLAUNCH_UID_RANGE"), std::string::npos) << r.Describe();
  EXPECT_FALSE(fs::exists(DomainStateDir("iso-r3")));
  struct stat st {};
  ASSERT_EQ(::stat(Image("iso-r3").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(launcher::IdsHeldUnder(DomainStateDir("iso-r3")), std::vector<uint32_t>{});

  const std::string freed = QemuIdOf(a);
  EXPECT_EQ(Qlaunch({"destroy", "iso-r1"}).exit_code, 0);
  const pid_t c = Start(third);
  ASSERT_GT(c, 0);
  EXPECT_EQ(QemuIdOf(c), freed) << "the destroyed domain's uid is free again";
  for (const char* name : {"iso-r2", "iso-r3"}) EXPECT_EQ(Qlaunch({"destroy", name}).exit_code, 0);
  ExpectNothingOwnedByTheRange({StateDir(), tmp() / "images"});
  ExpectNothingLeft("iso-r3", free_before_);
}

// qlaunch start SIGKILLed once QEMU is spawned (a QEMU that never greets keeps it waiting): its
// lease stays recorded with the state; the next command (list) releases it with the rest, and
// gives the image back.
TEST_F(LaunchIsolationTest, ASigkilledStartsLeaseIsRecoveredByTheNextCommand) {
  range_ = "3700200-3700200";  // one uid: the next start needs it back
  ::setenv("QLAUNCH_UID_RANGE", range_.c_str(), 1);
  const fs::path fake = tmp() / "sleepy-qemu";
  std::ofstream(fake) << "#!/bin/sh\ncase \" $* \" in *\" -machine none \"*) exec " << kQemu72
                      << " \"$@\";; esac\nexec sleep 600\n";
  fs::permissions(fake, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const std::string xml = Domain("iso-kill");
  Env env = BaseEnv();
  env["QLAUNCH_UID_LEASES"] = (tmp() / "leases").string();
  env["QLAUNCH_UID_RANGE"] = range_;
  RunningProcess start({QlaunchBinary(), "start", "--qemu", fake.string(), xml}, env);
  const fs::path pid_file = DomainStateDir("iso-kill") / "pid";
  for (int i = 0; i < 1000 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(pid_file)) << start.ErrSoFar();
  ASSERT_EQ(::kill(start.pid(), SIGKILL), 0);
  RunResult killed = start.Wait();
  EXPECT_EQ(killed.signal, SIGKILL) << killed.Describe();
  EXPECT_EQ(launcher::IdsHeldUnder(StateDir()), std::vector<uint32_t>{3700200}) << "held with the state it left";
  struct stat st {};
  ASSERT_EQ(::stat(Image("iso-kill").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 3700200u) << "given to the leased uid before QEMU was spawned";

  RunResult list = Qlaunch({"list", "--json"});
  EXPECT_EQ(list.exit_code, 0) << list.Describe();
  EXPECT_EQ(list.out, "[]\n") << list.Describe();
  EXPECT_EQ(launcher::IdsHeldUnder("/"), std::vector<uint32_t>{}) << "list released the lease";
  ASSERT_EQ(::stat(Image("iso-kill").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  ExpectNothingOwnedByTheRange({StateDir(), tmp() / "images"});
  // The one uid serves the next start.
  const pid_t again = Start(xml);
  ASSERT_GT(again, 0);
  EXPECT_EQ(QemuIdOf(again), "3700200");
  EXPECT_EQ(Qlaunch({"destroy", "iso-kill"}).exit_code, 0);
  ExpectNothingLeft("iso-kill", free_before_);
}

// A start SIGKILLed after it leased its ids but before it made its domain dir: its lease names a
// dir that does not exist and a qlaunch that is gone. The next command lets it go, not only the
// next lease: `list` (with no domain to look at), and a verb on a named domain (destroy).
TEST_F(LaunchIsolationTest, ALeaseOfAStartKilledBeforeItsStateDirIsReapedByTheNextCommand) {
  range_ = "3700300-3700301";
  ::setenv("QLAUNCH_UID_RANGE", range_.c_str(), 1);
  Env env = BaseEnv();
  env["QLAUNCH_UID_LEASES"] = (tmp() / "leases").string();
  env["QLAUNCH_UID_RANGE"] = range_;
  // Leases as start does (its key, the domain dir it is about to make), then dies.
  auto lease_and_die = [&](const std::string& name) -> uint32_t {
    const fs::path out = tmp() / (name + ".id");
    const pid_t child = ::fork();
    if (child == 0) {
      const uint32_t id = launcher::LeaseId("domain:" + name + ":00000000-0000-0000-0000-000000000000",
                                            StateDir() / name);
      std::ofstream(out) << id;
      ::_exit(0);
    }
    int status = 0;
    EXPECT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_FALSE(fs::exists(StateDir() / name));
    return static_cast<uint32_t>(std::stoul(Slurp(out)));
  };

  const uint32_t first = lease_and_die("iso-gone");
  EXPECT_EQ(first, 3700300u);
  EXPECT_TRUE(launcher::IdLeased(first)) << "nothing let it go yet";
  RunResult list = Qlaunch({"list", "--json"}, env);
  EXPECT_EQ(list.exit_code, 0) << list.Describe();
  EXPECT_EQ(list.out, "[]\n");
  EXPECT_FALSE(launcher::IdLeased(first)) << "list reaped the dead start's lease";

  const uint32_t second = lease_and_die("iso-gone2");
  EXPECT_TRUE(launcher::IdLeased(second));
  RunResult destroy = Qlaunch({"destroy", "iso-gone2"}, env);
  EXPECT_NE(destroy.exit_code, 0) << destroy.Describe();  // not running
  EXPECT_FALSE(launcher::IdLeased(second)) << "a verb on a named domain reaped it too";
  ExpectNothingOwnedByTheRange({StateDir(), tmp() / "leases"});
}

}  // namespace
}  // namespace qlaunch::testing
