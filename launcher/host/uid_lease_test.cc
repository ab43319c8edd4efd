#include "launcher/host/uid_lease.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

class UidLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qlaunch-lease-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ::setenv("QLAUNCH_UID_LEASES", (root_ / "leases").c_str(), 1);
    ::setenv("QLAUNCH_UID_RANGE", "3900000-3900001", 1);
  }
  void TearDown() override {
    ::unsetenv("QLAUNCH_UID_LEASES");
    ::unsetenv("QLAUNCH_UID_RANGE");
    fs::remove_all(root_);
  }
  // A domain dir that names its lease, as a start leaves it.
  fs::path Holder(const std::string& name, uint32_t id) {
    fs::path dir = root_ / "state" / name;
    fs::create_directories(dir);
    WriteDomainLease(dir, {id, id, {}});
    return dir;
  }
  fs::path root_;
};

TEST_F(UidLeaseTest, RangeIsParsedAndCheckedAndDefaults) {
  EXPECT_EQ(LeaseRange().first, 3900000u);
  EXPECT_EQ(LeaseRange().last, 3900001u);
  for (const char* bad : {"5", "5-4", "0-3", "a-b", "1-2x", "1-4294967295"}) {
    ::setenv("QLAUNCH_UID_RANGE", bad, 1);
    EXPECT_THROW(LeaseRange(), std::invalid_argument) << bad;
  }
  ::unsetenv("QLAUNCH_UID_RANGE");
  EXPECT_EQ(LeaseRange().first, 2100000000u);
  ::unsetenv("QLAUNCH_UID_LEASES");
  EXPECT_EQ(LeaseRegistry(), fs::path("/run/qlaunch-uids"));
}

TEST_F(UidLeaseTest, EachKeyGetsItsOwnNumberAndTheRangeRunsOut) {
  const fs::path a = root_ / "state" / "a", b = root_ / "state" / "b";
  const uint32_t ia = LeaseId("domain:a:", a), ib = LeaseId("domain:b:", b);
  EXPECT_EQ(ia, 3900000u);
  EXPECT_EQ(ib, 3900001u);
  // The same domain (a migration's other end, another state root) shares its number.
  EXPECT_EQ(LeaseId("domain:a:", root_ / "other" / "a"), ia);
  try {
    LeaseId("domain:c:", root_ / "state" / "c");
    ADD_FAILURE() << "a third key got a number from a range of two";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no free uid in the lease range 3900000-3900001"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("domain:a:"), std::string::npos) << e.what();
  }
  EXPECT_EQ(IdsHeldBy(a), std::vector<uint32_t>{ia});
  ReleaseIds(b);
  EXPECT_FALSE(IdLeased(ib));
  EXPECT_EQ(LeaseId("domain:c:", root_ / "state" / "c"), ib);
}

// A holder whose qlaunch is gone and whose dir does not name the number lets go at the next
// lease (a start SIGKILLed before it claimed its dir); one whose dir names it holds.
TEST_F(UidLeaseTest, AHolderThatIsGoneLetsGoAndADirThatNamesItHolds) {
  const pid_t child = ::fork();
  if (child == 0) {
    LeaseId("domain:killed:", root_ / "state" / "killed");
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(IdLeased(3900000));
  // The killed one's number is free again at the next lease ...
  const uint32_t kept = LeaseId("domain:kept:", root_ / "state" / "kept");
  EXPECT_EQ(kept, 3900000u);
  Holder("kept", kept);
  SettleHolds(root_ / "state" / "kept");
  // ... and a settled one's, held by its dir alone, is not.
  EXPECT_EQ(LeaseId("domain:new:", root_ / "state" / "new"), 3900001u);
  EXPECT_EQ(IdsHeldUnder(root_ / "state" / "kept"), std::vector<uint32_t>{kept});
  fs::remove_all(root_ / "state" / "kept");
  EXPECT_EQ(IdsHeldUnder(root_ / "state" / "kept"), std::vector<uint32_t>{}) << "its dir is gone";
}

// Leases from many processes at once: every key one number, none shared (the registry's flock).
TEST_F(UidLeaseTest, ConcurrentLeasesNeverShareANumber) {
  ::setenv("QLAUNCH_UID_RANGE", "3900000-3900063", 1);
  std::vector<pid_t> kids;
  for (int i = 0; i < 16; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const fs::path dir = root_ / "state" / ("d" + std::to_string(i));
      const uint32_t id = LeaseId("domain:d" + std::to_string(i) + ":", dir);
      fs::create_directories(dir);
      WriteDomainLease(dir, {id, id, {}});
      SettleHolds(dir);
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(k, &status, 0), k);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::set<uint32_t> seen;
  for (int i = 0; i < 16; ++i) {
    const auto held = IdsHeldBy(root_ / "state" / ("d" + std::to_string(i)));
    ASSERT_EQ(held.size(), 1u) << i;
    EXPECT_TRUE(seen.insert(held[0]).second) << "number " << held[0] << " leased twice";
  }
}

}  // namespace
}  // namespace qlaunch::launcher
