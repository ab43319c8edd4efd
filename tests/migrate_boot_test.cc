// Live migration of a booted guest between two "hosts" on this machine: two state roots
// (QLAUNCH_STATE_DIR), the source started as usual, the destination with
// `start --incoming URI` from the source's live XML (dumpxml, only the serial log's path
// changed), then `migrate NAME URI` on the source. The guest (Debian's kernel, a busybox
// initramfs whose /init is tests/boot/migrate-init) fills 64 MiB of its RAM, reports its MD5,
// and counts on its serial port: after the move the destination's console goes on from the
// source's last count and sums the buffer to the same MD5. And `migrate --local` of the same
// guest: a new QEMU given its memfds, the count going on in the one serial log. Two 128 MiB NUMA
// cells on shared 2 MiB hugetlb memfds, a raw virtio disk, a virtio NIC on user networking.
// Under TCG (nested KVM guests hang in early boot here). And the failures: a destination nobody listens on (the
// source runs on), a destination short of hugepages (refused before anything is made).

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "support/migrate_guest.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::seconds;

class MigrateTest : public MigrateGuestTest {};

TEST_F(MigrateTest, ABootedGuestMovesBetweenTwoStateRootsAndKeepsItsMemory) {
  const std::string name = "mig-boot";
  ASSERT_NO_FATAL_FAILURE(BootSource(name));
  EXPECT_EQ(HugepagesFree(), free_before_ - kGuestPages);

  // The destination: planned and filled like a start, waiting for the migration.
  // QEMU (the domain's leased uid, the source's too) makes the destination's socket: in a
  // directory it may write, sticky as /tmp.
  const fs::path sock_dir = tmp() / "sock";
  fs::create_directories(sock_dir);
  ASSERT_EQ(::chmod(sock_dir.c_str(), 01777), 0);
  const std::string uri = "unix:" + (sock_dir / "mig.sock").string();
  const json incoming = StartIncoming(name, uri);
  ASSERT_FALSE(incoming.is_null());
  EXPECT_EQ(incoming.value("incoming", ""), uri) << incoming.dump();
  const pid_t dest_pid = incoming.value("pid", 0);
  EXPECT_NE(dest_pid, source_pid_);
  EXPECT_EQ(HugepagesFree(), free_before_ - 2 * kGuestPages) << "the destination's memory is taken up front";
  const json waiting = Listed(name, B());
  EXPECT_EQ(waiting.value("state", ""), "incoming") << waiting.dump();
  EXPECT_EQ(waiting.value("pid", 0), dest_pid) << waiting.dump();
  RunResult info = Qlaunch({"dominfo", "--json", name}, B());
  EXPECT_EQ(info.exit_code, 0) << info.Describe();
  if (info.exit_code == 0) {
    EXPECT_EQ(json::parse(info.out).value("state", ""), "incoming") << info.out;
  }
  EXPECT_EQ(Listed(name).value("state", ""), "running") << "the source is untouched so far";
  const uint64_t seen_on_source = LastCount(source_);

  RunResult migrated = Qlaunch({"migrate", name, uri, "--live", "--json"}, {}, std::chrono::minutes(5));
  ASSERT_EQ(migrated.exit_code, 0) << migrated.Describe();
  const json m = json::parse(migrated.out);
  EXPECT_EQ(m.value("name", ""), name) << m.dump();
  EXPECT_EQ(m.value("uri", ""), uri) << m.dump();
  EXPECT_EQ(m.value("status", ""), "completed") << m.dump();
  for (const char* field : {"total_time_ms", "setup_time_ms", "downtime_ms", "ram_transferred_bytes", "ram_total_bytes"})
    ASSERT_TRUE(m.contains(field) && m[field].is_number()) << field << " in " << m.dump();
  EXPECT_GT(m["total_time_ms"].get<double>(), 0.0) << m.dump();
  EXPECT_GE(m["setup_time_ms"].get<double>(), 0.0) << m.dump();
  EXPECT_GE(m["downtime_ms"].get<double>(), 0.0) << m.dump();
  EXPECT_LE(m["downtime_ms"].get<double>(), m["total_time_ms"].get<double>()) << m.dump();
  EXPECT_GE(m["ram_total_bytes"].get<uint64_t>(), kGuestPages * 2 * MiB) << m.dump();  // the guest and some ROMs
  EXPECT_GE(m["ram_transferred_bytes"].get<uint64_t>(), 64 * MiB) << "at least the random buffer: " << m.dump();

  // The source is gone, its pages back; the destination runs the guest on.
  ExpectGoneFromSource(name);
  EXPECT_EQ(HugepagesFree(), free_before_ - kGuestPages) << "the source's pages are given back";
  EXPECT_EQ(StateAfterIncoming(name, B(), seconds(30)), "running");
  EXPECT_EQ(Listed(name, B()).value("pid", 0), dest_pid);
  EXPECT_FALSE(PidGone(dest_pid));
  const uint64_t last_on_source = LastCount(source_);  // final: the source's QEMU has quit
  EXPECT_GE(last_on_source, seen_on_source);
  ExpectGuestGoesOn(last_on_source);
  EXPECT_NE(Qlaunch({"dumpxml", name}, B()).out.find(dest_.serial.string()), std::string::npos);

  RunResult destroyed = Qlaunch({"destroy", name}, B());
  EXPECT_EQ(destroyed.exit_code, 0) << destroyed.Describe();
  ExpectHostClean(name, dest_pid, free_before_, OtherStateDir("b"));
  EXPECT_EQ(Qlaunch({"list", "--json"}, B()).out, "[]\n");
  ExpectNothingLeft(name, free_before_);
}

TEST_F(MigrateTest, AnUnreachableDestinationLeavesTheSourceRunning) {
  const std::string name = "mig-unreach";
  ASSERT_NO_FATAL_FAILURE(BootSource(name));

  const fs::path nobody = tmp() / "nobody.sock";
  RunResult failed = Qlaunch({"migrate", name, "unix:" + nobody.string(), "--live"}, {}, std::chrono::minutes(2));
  EXPECT_NE(failed.exit_code, 0) << failed.Describe();
  EXPECT_FALSE(failed.timed_out) << failed.Describe();
  EXPECT_NE(failed.err.find(nobody.string()), std::string::npos) << "the error names the destination: " << failed.Describe();
  EXPECT_TRUE(failed.err.find("No such file or directory") != std::string::npos ||
              failed.err.find("onnection refused") != std::string::npos)
      << "the error says why: " << failed.Describe();

  // The source runs on as it was: listed running, its state directory intact, its pages held,
  // the guest counting.
  const json e = Listed(name);
  EXPECT_EQ(e.value("state", ""), "running") << e.dump();
  EXPECT_EQ(e.value("pid", 0), source_pid_) << e.dump();
  EXPECT_FALSE(PidGone(source_pid_));
  EXPECT_EQ(Slurp(DomainStateDir(name) / "pid"), std::to_string(source_pid_) + "\n");
  EXPECT_TRUE(fs::exists(DomainStateDir(name) / "plan.json"));
  EXPECT_TRUE(fs::exists(DomainStateDir(name) / "qmp.sock"));
  EXPECT_EQ(HugepagesFree(), free_before_ - kGuestPages);
  ExpectCounting(source_);

  RunResult destroyed = Qlaunch({"destroy", name});
  EXPECT_EQ(destroyed.exit_code, 0) << destroyed.Describe();
  ExpectHostClean(name, source_pid_, free_before_);
  EXPECT_EQ(Qlaunch({"list", "--json"}).out, "[]\n");
}

TEST_F(MigrateTest, ADestinationShortOfHugepagesIsRefusedBeforeAnythingIsMade) {
  const std::string name = "mig-short";
  ASSERT_NO_FATAL_FAILURE(BootSource(name));
  // Half a guest's pages left free: the pool is the source's and a little more (the pool is
  // ours while pool_ holds its lock; it puts the old size back at the end).
  std::string error;
  ASSERT_TRUE(SetNrHugepages(HugepagesTotal() - kGuestPages / 2, &error)) << error;
  ASSERT_EQ(HugepagesFree(), kGuestPages / 2);

  const fs::path sock = tmp() / "mig.sock";
  RunResult refused = Qlaunch({"start", "--incoming", "unix:" + sock.string(), "--json", DestinationXml(name)}, B());
  EXPECT_NE(refused.exit_code, 0) << refused.Describe();
  EXPECT_NE(refused.err.find("hugepages"), std::string::npos) << refused.Describe();

  // Nothing made under B: no entry, no process, no socket; no pages taken.
  EXPECT_EQ(Qlaunch({"list", "--json"}, B()).out, "[]\n");
  std::vector<std::string> entries;
  std::error_code ec;
  for (fs::directory_iterator it(OtherStateDir("b"), ec), end; !ec && it != end; it.increment(ec))
    entries.push_back(it->path().filename().string());
  EXPECT_EQ(entries, std::vector<std::string>{}) << "left in " << OtherStateDir("b");
  EXPECT_EQ(LivePidsWithCmdline(OtherStateDir("b").string()), std::vector<pid_t>{});
  EXPECT_EQ(LiveChildren(), std::vector<pid_t>{source_pid_}) << "a QEMU besides the source's";
  EXPECT_FALSE(fs::exists(sock));
  EXPECT_EQ(HugepagesFree(), kGuestPages / 2);

  // The source is untouched.
  EXPECT_EQ(Listed(name).value("state", ""), "running");
  ExpectCounting(source_);

  EXPECT_EQ(Qlaunch({"destroy", name}).exit_code, 0);
  ExpectHostClean(name, source_pid_, kGuestPages / 2 + kGuestPages);
}

TEST_F(MigrateTest, APausedSourceArrivesPaused) {
  const std::string name = "mig-paused";
  ASSERT_NO_FATAL_FAILURE(BootSource(name));
  RunResult suspended = Qlaunch({"suspend", name});
  ASSERT_EQ(suspended.exit_code, 0) << suspended.Describe();
  EXPECT_EQ(Listed(name).value("state", ""), "paused");

  // Over TCP this time, on a port the destination picks (port 0) and reports.
  const json incoming = StartIncoming(name, "tcp:127.0.0.1:0");
  ASSERT_FALSE(incoming.is_null());
  const std::string uri = incoming.value("incoming", "");
  EXPECT_TRUE(std::regex_match(uri, std::regex("tcp:127\\.0\\.0\\.1:[1-9][0-9]*"))) << incoming.dump();
  const pid_t dest_pid = incoming.value("pid", 0);
  EXPECT_EQ(Listed(name, B()).value("state", ""), "incoming");

  RunResult migrated = Qlaunch({"migrate", name, uri, "--live", "--json"}, {}, std::chrono::minutes(5));
  ASSERT_EQ(migrated.exit_code, 0) << migrated.Describe();
  EXPECT_EQ(json::parse(migrated.out).value("status", ""), "completed") << migrated.out;
  ExpectGoneFromSource(name);
  EXPECT_EQ(HugepagesFree(), free_before_ - kGuestPages) << "the source's pages are given back";
  EXPECT_EQ(StateAfterIncoming(name, B(), seconds(30)), "paused");
  const uint64_t last_on_source = LastCount(source_);
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(dest_.Reports("count"), std::vector<std::string>{}) << "the guest ran while paused";

  RunResult resumed = Qlaunch({"resume", name}, B());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_EQ(Listed(name, B()).value("state", ""), "running");
  ExpectGuestGoesOn(last_on_source);

  EXPECT_EQ(Qlaunch({"destroy", name}, B()).exit_code, 0);
  ExpectHostClean(name, dest_pid, free_before_, OtherStateDir("b"));
  ExpectNothingLeft(name, free_before_);
}

// `migrate --local`: a new QEMU under the running guest, given the same memfds, the guest's RAM
// not sent. Both QEMUs append to the one serial log (append=on), so the count goes on in it.
TEST_F(MigrateTest, ABootedGuestCountsOnUnderANewQemuGivenItsMemoryByFd) {
  const std::string name = "mig-local";
  ASSERT_NO_FATAL_FAILURE(BootSource(name));
  const size_t resums_before = source_.Reports("resum").size();
  const uint64_t seen = LastCount(source_);

  RunResult swapped = Qlaunch({"migrate", name, "--local", "--json"}, {}, std::chrono::minutes(2));
  ASSERT_EQ(swapped.exit_code, 0) << swapped.Describe();
  const json m = json::parse(swapped.out);
  const pid_t new_pid = m.value("new_pid", 0);
  EXPECT_EQ(m.value("old_pid", 0), source_pid_) << m.dump();
  EXPECT_EQ(m.value("handed_over_bytes", uint64_t{0}), kGuestPages * 2 * MiB) << m.dump();
  // The 64 MiB random buffer lies in the handed-over memory: it must not travel.
  EXPECT_LT(m.value("ram_transferred_bytes", uint64_t{1} << 40), 16 * MiB) << m.dump();
  ExpectQemuGone(source_pid_);
  EXPECT_EQ(Listed(name).value("state", ""), "running");
  EXPECT_EQ(Listed(name).value("pid", 0), new_pid);
  ExpectUnprivileged(new_pid);
  EXPECT_EQ(HugepagesFree(), free_before_ - kGuestPages) << "the same pages, none more";

  // The guest goes on from where it was, without a second boot, and a fresh sum of its buffer
  // (summed after the swap) is the first.
  EXPECT_GT(CountPasses(source_, seen + 3, seconds(60)), seen + 3) << Slurp(source_.serial);
  const std::vector<std::string> counts = source_.Reports("count");
  for (size_t i = 1; i < counts.size(); ++i)
    EXPECT_EQ(std::stoull(counts[i]), std::stoull(counts[i - 1]) + 1) << "the count jumped or restarted";
  EXPECT_EQ(source_.Reports("sum").size(), 1u) << "the guest booted again:\n" << Slurp(source_.serial);
  for (auto end = std::chrono::steady_clock::now() + seconds(60);
       source_.Reports("resum").size() <= resums_before && std::chrono::steady_clock::now() < end;)
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_GT(source_.Reports("resum").size(), resums_before) << Slurp(source_.serial);
  ExpectEveryResum(source_);

  RunResult destroyed = Qlaunch({"destroy", name});
  EXPECT_EQ(destroyed.exit_code, 0) << destroyed.Describe();
  ExpectHostClean(name, new_pid, free_before_);
  ExpectNothingLeft(name, free_before_);
}

}  // namespace
}  // namespace qlaunch::testing
