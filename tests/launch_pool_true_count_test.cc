// The pre-flight counts what a hugepage pool really has: free pages minus those reserved by a
// mapping and not faulted in yet (launcher/pool_reserved.h). Starts that race for one pool, as a
// scheduler produces them, are refused in the pre-flight with that true count, before anything
// exists, even when the winner's memory is still filling (its pages are reserved, not yet free
// of it). Real QEMU 7.2, real hugepages.
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

uint64_t ReservedPages() {
  std::ifstream in("/sys/kernel/mm/hugepages/hugepages-" + std::to_string(DefaultHugepageBytes() / 1024) +
                   "kB/resv_hugepages");
  uint64_t n = 0;
  in >> n;
  return n;
}

// A shared hugetlb mapping of `pages` pages, never touched: the kernel reserves its pages at
// mmap (resv_hugepages) and keeps them in free_hugepages until they are faulted in.
class Reservation {
 public:
  explicit Reservation(uint64_t pages) : bytes_(pages * DefaultHugepageBytes()) {
    fd_ = ::memfd_create("qlaunch-test-reservation", MFD_HUGETLB | MFD_CLOEXEC);
    if (fd_ < 0 || ::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) return;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p != MAP_FAILED) addr_ = p;
  }
  ~Reservation() {
    if (addr_) ::munmap(addr_, bytes_);
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return addr_ != nullptr; }

 private:
  uint64_t bytes_;
  int fd_ = -1;
  void* addr_ = nullptr;
};

class LaunchPoolTrueCountTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    if (DefaultHugepageBytes() != (2u << 20)) GTEST_SKIP() << "these tests assume 2 MiB default hugepages";
  }

  // The pre-flight's pool error with exactly these counts, and nothing of QEMU's.
  static void ExpectRefusedInPreflight(const RunResult& r, uint64_t needed, uint64_t available) {
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    const std::string want = "not enough 2 MiB hugepages on host node 0: the domain needs " + std::to_string(needed) +
                             ", " + std::to_string(available) + (available == 1 ? " is" : " are") + " free";
    EXPECT_NE(r.err.find(want), std::string::npos) << "want: " << want << "\n" << r.Describe();
    EXPECT_EQ(r.err.find("QEMU"), std::string::npos) << "the loser got as far as QEMU:\n" << r.Describe();
    EXPECT_EQ(r.err.find("exhausted"), std::string::npos) << "failed in the fill:\n" << r.Describe();
  }

  // `n` domains of `d`'s size started at once on a pool that holds `fit` of them: exactly `fit`
  // run, the others are refused in the pre-flight with the true count (what the winners left:
  // nothing the size of one more), and after destroying the winners the pool is whole.
  void RaceRound(SmallDomain d, unsigned n, unsigned fit, const std::string& mode) {
    const uint64_t pages = d.Bytes() / DefaultHugepageBytes();
    const uint64_t free_before = HugepagesFree();
    std::vector<std::string> names, xmls;
    for (unsigned i = 0; i < n; ++i) {
      d.name = "race-" + std::to_string(i);
      names.push_back(d.name);
      xmls.push_back(WriteDomain(d));
    }
    // QEMU's capabilities cached first: the race is for the pool, not eight probes at once.
    RunResult caps = Qlaunch({"capabilities", "--json"});
    ASSERT_EQ(caps.exit_code, 0) << caps.Describe();
    ASSERT_FALSE(nlohmann::json::parse(caps.out).at("qemu").is_null()) << caps.Describe();
    std::vector<std::unique_ptr<RunningProcess>> procs;
    for (const auto& xml : xmls)
      procs.push_back(std::make_unique<RunningProcess>(
          std::vector<std::string>{QlaunchBinary(), "start", "--json", "--prealloc", mode, xml}, BaseEnv()));
    std::vector<RunResult> results;
    for (auto& p : procs) results.push_back(p->Wait(std::chrono::minutes(3)));
    unsigned won = 0;
    std::vector<std::pair<std::string, pid_t>> winners;
    for (unsigned i = 0; i < n; ++i) {
      if (results[i].exit_code == 0) {
        ++won;
        winners.emplace_back(names[i], nlohmann::json::parse(results[i].out).at("pid").get<pid_t>());
        continue;
      }
      SCOPED_TRACE("loser " + names[i]);
      // Every winner's pages were reserved or faulted when the loser counted: what is left is the
      // pool less `fit` domains, 0 pages or the remainder below one domain.
      ExpectRefusedInPreflight(results[i], pages, free_before - uint64_t{fit} * pages);
      EXPECT_FALSE(fs::exists(StateDir() / names[i]));
    }
    EXPECT_EQ(won, fit);
    EXPECT_EQ(free_before - HugepagesFree(), uint64_t{won} * pages) << "the winners hold exactly their pages";
    RunResult list = Qlaunch({"list", "--json"});
    EXPECT_EQ(nlohmann::json::parse(list.out).size(), won) << list.Describe();
    for (const auto& [name, pid] : winners) EXPECT_EQ(Qlaunch({"destroy", name}).exit_code, 0) << name;
    for (const auto& [name, pid] : winners) ExpectHostClean(name, pid, free_before);
    ExpectNothingLeft(names[0], free_before);
  }
};

// Pages another mapping reserved are not free to us, whatever free_hugepages says: the start is
// refused in the pre-flight naming both counts, and nothing is made.
TEST_F(LaunchPoolTrueCountTest, PagesReservedButNotFaultedAreNotCountedAsFree) {
  SmallDomain d;
  const uint64_t pages = d.Bytes() / DefaultHugepageBytes();
  HugepagePool pool = HugepagePool::Exactly(pages + pages / 2);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const std::string xml = WriteDomain(d);
  const uint64_t resv_before = ReservedPages();
  Reservation held(pages);
  ASSERT_TRUE(held.ok()) << "cannot reserve " << pages << " hugepages";
  ASSERT_EQ(ReservedPages(), resv_before + pages);
  const uint64_t free_before = HugepagesFree();
  ASSERT_EQ(free_before, pages + pages / 2) << "an untouched mapping's pages still count as free";
  for (const char* mode : {"launcher", "qemu"}) {
    SCOPED_TRACE(std::string("--prealloc ") + mode);
    RunResult r = Qlaunch({"start", "--prealloc", mode, xml});
    ExpectRefusedInPreflight(r, pages, pages / 2);
    EXPECT_NE(r.err.find(std::to_string(pages + pages / 2) + " free, " + std::to_string(pages + resv_before) +
                         " of them reserved by mappings not filled yet"),
              std::string::npos)
        << r.Describe();
    ExpectNothingLeft(d.name, free_before);
  }
}

// Two large domains whose fill outlasts QEMU's start-up, on a pool for one: the winner releases
// the pool lock once its pages are reserved, long before they are filled; the loser must count
// them as taken.
TEST_F(LaunchPoolTrueCountTest, TwoLargeStartsOnAPoolForOne) {
  SmallDomain d;
  d.cell_mib = 1024;  // 2 GiB each: filling takes longer than QEMU's start-up on this host
  const uint64_t pages = d.Bytes() / DefaultHugepageBytes();
  HugepagePool pool = HugepagePool::Exactly(pages + pages / 2);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  for (const char* mode : {"launcher", "qemu", "launcher"}) {
    SCOPED_TRACE(std::string("--prealloc ") + mode);
    RaceRound(d, 2, 1, mode);
  }
}

// Eight small domains at once on a pool for six: six run, two are refused in the pre-flight.
TEST_F(LaunchPoolTrueCountTest, EightSmallStartsOnAPoolForSix) {
  SmallDomain d;
  const uint64_t pages = d.Bytes() / DefaultHugepageBytes();
  HugepagePool pool = HugepagePool::Exactly(6 * pages);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  for (const char* mode : {"launcher", "qemu"}) {
    SCOPED_TRACE(std::string("--prealloc ") + mode);
    RaceRound(d, 8, 6, mode);
  }
}

}  // namespace
}  // namespace qlaunch::testing
