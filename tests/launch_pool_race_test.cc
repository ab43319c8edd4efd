// Two starts of different domains launched together on a hugepage pool that fits one of them
// (launcher/host/pool_lock.h): exactly one runs, the other fails in the pre-flight with the pool
// error (node, page size, needed, free) and never spawns a QEMU; afterwards no page is missing.
// Several rounds, QEMU's own preallocation and the launcher's, on real QEMU 7.2.
#include <fstream>
#include <regex>

#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

class LaunchPoolRaceTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(LaunchPoolRaceTest, OfTwoStartsThatDoNotFitTogetherExactlyOneRuns) {
  SmallDomain a, b;
  a.name = "race-a";
  b.name = "race-b";
  const uint64_t pages = a.Bytes() / DefaultHugepageBytes();  // each needs this many
  HugepagePool pool = HugepagePool::Exactly(pages + pages / 2);  // one fits, two do not
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const std::string xa = WriteDomain(a), xb = WriteDomain(b);

  for (const char* mode : {"qemu", "launcher", "qemu", "launcher"}) {
    SCOPED_TRACE(std::string("--prealloc ") + mode);
    const uint64_t free_before = HugepagesFree();
    ASSERT_EQ(free_before, pages + pages / 2);
    RunningProcess pa({QlaunchBinary(), "start", "--json", "--prealloc", mode, xa}, BaseEnv());
    RunningProcess pb({QlaunchBinary(), "start", "--json", "--prealloc", mode, xb}, BaseEnv());
    RunResult ra = pa.Wait(std::chrono::seconds(60)), rb = pb.Wait(std::chrono::seconds(60));

    ASSERT_EQ((ra.exit_code == 0) + (rb.exit_code == 0), 1) << ra.Describe() << "\n" << rb.Describe();
    const bool a_won = ra.exit_code == 0;
    const RunResult& loser = a_won ? rb : ra;
    const std::string loser_name = a_won ? b.name : a.name, winner_name = a_won ? a.name : b.name;
    EXPECT_EQ(loser.exit_code, 1) << loser.Describe();
    // The pre-flight's pool error: page size, node, needed and free; never QEMU's own failure.
    const std::regex pool_error("not enough 2 MiB hugepages on host node 0: the domain needs " + std::to_string(pages) +
                                ", [0-9]+ (is|are) free");
    EXPECT_TRUE(std::regex_search(loser.err, pool_error)) << loser.Describe();
    EXPECT_EQ(loser.err.find("QEMU"), std::string::npos) << "the loser got as far as QEMU:\n" << loser.Describe();
    EXPECT_FALSE(std::filesystem::exists(DomainStateDir(loser_name)));

    // The winner runs with its pages; nothing else holds any.
    const pid_t pid = nlohmann::json::parse((a_won ? ra : rb).out).at("pid").get<pid_t>();
    EXPECT_EQ(free_before - HugepagesFree(), pages);
    RunResult list = Qlaunch({"list", "--json"});
    EXPECT_EQ(nlohmann::json::parse(list.out).size(), 1u) << list.Describe();
    EXPECT_EQ(Qlaunch({"destroy", winner_name}).exit_code, 0);
    ExpectHostClean(winner_name, pid, free_before);
    ExpectNothingLeft(loser_name, free_before);
  }
}

// A QEMU that exits during start is reported as an exit, with its log, at once: QEMU holds the
// listening QMP socket qlaunch made, so its death resets or refuses the connection; nothing
// waits for the QMP timeout.
TEST_F(LaunchPoolRaceTest, AQemuThatExitsIsReportedAsAnExitAtOnce) {
  const fs::path fake = tmp() / "dying-qemu";
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
        << "case \" $* \" in *\" -machine none \"*) exec " << kQemu72 << " \"$@\";; esac\n"
        << "echo 'fake-qemu: cannot map backing store' >&2\n"
        << "exit 3\n";
  }
  fs::permissions(fake, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec |
                            fs::perms::group_read | fs::perms::group_exec);
  SmallDomain d;
  HugepagePool pool = HugepagePool::AtLeast(d.Bytes() / DefaultHugepageBytes() + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const uint64_t free_before = HugepagesFree();
  const std::string xml = WriteDomain(d);
  for (const char* mode : {"qemu", "launcher"}) {
    SCOPED_TRACE(mode);
    const auto t0 = std::chrono::steady_clock::now();
    RunResult r = Qlaunch({"start", "--prealloc", mode, "--qemu", fake.string(), xml});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("QEMU exited with status 3 while starting domain " + d.name), std::string::npos) << r.Describe();
    EXPECT_NE(r.err.find("fake-qemu: cannot map backing store"), std::string::npos) << "the log tail\n" << r.Describe();
    EXPECT_EQ(r.err.find("within"), std::string::npos) << "reported as a timeout:\n" << r.Describe();
    EXPECT_LT(seconds, 10.0) << "waited for a timeout (QMP's is 30 s)";
    ExpectNothingLeft(d.name, free_before);
  }
}

}  // namespace
}  // namespace qlaunch::testing
