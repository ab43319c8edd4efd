// A disk image and QEMU's own ids: relabeled for it, shared read-only between domains, and given back.
#include <signal.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "launcher/host/uid_lease.h"
#include "support/privileges_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(LaunchPrivilegesTest, ARootOnlyImageIsGivenToQemuAndBack) {
  fs::path image = Image("root-only.img");
  ASSERT_EQ(Owner(image), "root:root 0600");
  pid_t pid = Start(DiskXml("priv-disk", image, false));
  ASSERT_GT(pid, 0);
  ExpectUnprivileged(pid);
  EXPECT_EQ(Owner(image), Leased(pid) + " 0600");
  nlohmann::json blocks = QueryBlock("priv-disk");
  bool found = false;
  for (const auto& b : blocks) {
    if (!b.contains("inserted")) continue;
    found |= b["inserted"].value("file", "") == image.string();
    EXPECT_FALSE(b["inserted"].value("ro", true)) << b.dump();
  }
  EXPECT_TRUE(found) << "QEMU did not open " << image << ": " << blocks.dump();

  RunResult destroy = Qlaunch({"destroy", "priv-disk"});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");
  ExpectHostClean("priv-disk", pid, HugepagesFree());
}

TEST_F(LaunchPrivilegesTest, EveryFailedStartGivesTheImageBack) {
  fs::path image = Image("failing.img");
  const std::string xml = DiskXml("priv-fault", image, false);
  for (const char* phase : {"preflight", "spawn", "qmp", "prealloc", "cont"}) {
    SCOPED_TRACE(phase);
    RunResult r = Qlaunch({"start", xml}, {{"QLAUNCH_FAULT", phase}});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("fault injected at phase " + std::string(phase)), std::string::npos) << r.Describe();
    EXPECT_EQ(Owner(image), "root:root 0600");
    ExpectNothingLeft("priv-fault", HugepagesFree());
  }
}

TEST_F(LaunchPrivilegesTest, AKilledQemuGivesTheImageBackAtTheNextList) {
  fs::path image = Image("killed.img");
  pid_t pid = Start(DiskXml("priv-kill", image, false));
  ASSERT_GT(pid, 0);
  const std::string leased = Leased(pid);
  EXPECT_EQ(Owner(image), leased + " 0600");
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 500 && !PidGone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(Owner(image), leased + " 0600") << "nobody has looked yet";
  RunResult list = Qlaunch({"list", "--json"});
  EXPECT_EQ(list.out, "[]\n") << list.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");
  EXPECT_FALSE(fs::exists(DomainStateDir("priv-kill")));
  EXPECT_FALSE(launcher::IdLeased(static_cast<uint32_t>(std::stoul(leased.substr(1)))))
      << "the killed domain's uid is released with its state";
}

// Whether the ids of the QEMU of `pid` (uid, gid, supplementary groups: setpriv to them, as that
// QEMU reopening its disk by path would be) can open `path` read-only and read from it.
bool OpensAs(pid_t pid, const fs::path& path) {
  std::vector<std::string> argv = SetprivTo(pid);
  for (const std::string& a :
       std::vector<std::string>{"/usr/bin/dd", "if=" + path.string(), "of=/dev/null", "bs=4096", "count=1", "status=none"})
    argv.push_back(a);
  RunResult r = RunningProcess(argv, {}).Wait(std::chrono::seconds(30));
  return r.exit_code == 0;
}

// Two domains of their own ids on one read-only image: the first keeps owning it, the second
// reads it through a group leased for the file; each QEMU's ids can open it by path (a block
// reopen) for as long as it runs, whichever domain goes first, and the last one gives it back.
TEST_F(LaunchPrivilegesTest, ASharedReadOnlyImageKeepsItsLabelWhileADomainUsesIt) {
  for (const bool first_goes_first : {true, false}) {
    SCOPED_TRACE(first_goes_first ? "the first domain goes first" : "the second domain goes first");
    fs::path image = Image("shared-ro.img", 0640);
    pid_t a = Start(DiskXml("priv-ro-a", image, true));
    pid_t b = Start(DiskXml("priv-ro-b", image, true));
    ASSERT_GT(a, 0);
    ASSERT_GT(b, 0);
    ASSERT_NE(QemuIdOf(a), QemuIdOf(b));
    struct stat st {};
    ASSERT_EQ(::stat(image.c_str(), &st), 0);
    const std::string group = std::to_string(st.st_gid);
    EXPECT_EQ(Owner(image), "+" + QemuIdOf(a) + ":+" + group + " 0640") << "a keeps it, b reads through the group";
    EXPECT_TRUE(launcher::IdLeased(st.st_gid)) << group;
    EXPECT_NE(group, QemuIdOf(a));
    EXPECT_NE(group, QemuIdOf(b));
    EXPECT_NE((" " + ProcStatus(b)["Groups"] + " ").find(" " + group + " "), std::string::npos) << ProcStatus(b)["Groups"];
    EXPECT_TRUE(OpensAs(a, image)) << "a's QEMU can reopen its image by path";
    EXPECT_TRUE(OpensAs(b, image)) << "b's QEMU can open it by path";
    for (const char* name : {"priv-ro-a", "priv-ro-b"})
      for (const auto& blk : QueryBlock(name))
        if (blk.contains("inserted")) {
          EXPECT_TRUE(blk["inserted"].value("ro", false)) << name << blk.dump();
        }

    const std::string gone = first_goes_first ? "priv-ro-a" : "priv-ro-b";
    const pid_t stays = first_goes_first ? b : a;
    EXPECT_EQ(Qlaunch({"destroy", gone}).exit_code, 0);
    EXPECT_FALSE(PidGone(stays));
    EXPECT_EQ(Owner(image), (first_goes_first ? "root" : "+" + QemuIdOf(a)) + ":+" + group + " 0640")
        << "the other domain still uses it; no uid of a domain that went owns it";
    EXPECT_TRUE(OpensAs(stays, image)) << "the domain that stays can still open it by path";
    EXPECT_EQ(Qlaunch({"destroy", first_goes_first ? "priv-ro-b" : "priv-ro-a"}).exit_code, 0);
    EXPECT_EQ(Owner(image), "root:root 0640") << "the last domain gives it back, with the first owner";
    EXPECT_FALSE(launcher::IdLeased(st.st_gid)) << "the shared group goes with the last user";
  }
}

// change-media of a running domain onto an image another domain of its own ids uses: the same
// rule as a start (the image keeps its owner, a group leased for it), but a running QEMU cannot
// join a group, so its uid gets an ACL entry; both QEMUs' ids open it by path, and the entry,
// the group and the owner all go back with the last user.
TEST_F(LaunchPrivilegesTest, ChangeMediaOntoAnImageAnotherDomainUsesSharesIt) {
  fs::path image = Image("shared-cd.img", 0640);
  pid_t a = Start(DiskXml("priv-cd-a", image, true));
  ASSERT_GT(a, 0);
  const fs::path d_xml = tmp() / "priv-cd-d.xml";
  std::ofstream(d_xml) << "<domain type='qemu'>\n  <name>priv-cd-d</name>\n  <memory unit='MiB'>64</memory>\n"
                          "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='q35'>hvm</type></os>\n"
                          "  <devices>\n    <emulator>" << kQemu72 << "</emulator>\n"
                          "    <disk type='file' device='cdrom'>\n      <driver name='qemu' type='raw'/>\n"
                          "      <target dev='sda' bus='sata'/>\n      <readonly/>\n    </disk>\n"
                          "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
  pid_t d = Start(d_xml.string());
  ASSERT_GT(d, 0);
  const std::string d_groups = ProcStatus(d)["Groups"];
  RunResult change = Qlaunch({"change-media", "priv-cd-d", "sda", image.string(), "--insert"});
  ASSERT_EQ(change.exit_code, 0) << change.Describe();
  struct stat st {};
  ASSERT_EQ(::stat(image.c_str(), &st), 0);
  const std::string group = std::to_string(st.st_gid);
  EXPECT_EQ(Owner(image), "+" + QemuIdOf(a) + ":+" + group + " 0640") << "a keeps it, as when d had started on it";
  EXPECT_TRUE(launcher::IdLeased(st.st_gid)) << group;
  EXPECT_NE(group, QemuIdOf(a));
  EXPECT_NE(group, QemuIdOf(d));
  EXPECT_EQ(ProcStatus(d)["Groups"], d_groups) << "a running QEMU's groups stay";
  EXPECT_TRUE(OpensAs(a, image)) << "a's QEMU can still reopen its image by path";
  EXPECT_TRUE(OpensAs(d, image)) << "d's QEMU can open it by path (its ACL entry)";
  bool inserted = false;
  for (const auto& blk : QueryBlock("priv-cd-d"))
    if (blk.contains("inserted")) inserted |= blk["inserted"].value("file", "") == image.string();
  EXPECT_TRUE(inserted) << "d's QEMU opened the image";

  EXPECT_EQ(Qlaunch({"destroy", "priv-cd-a"}).exit_code, 0);
  EXPECT_EQ(Owner(image), "root:+" + group + " 0640") << "the first owner back in a's place";
  EXPECT_TRUE(OpensAs(d, image)) << "d still opens it";
  RunResult eject = Qlaunch({"change-media", "priv-cd-d", "sda", "--eject"});
  EXPECT_EQ(eject.exit_code, 0) << eject.Describe();
  EXPECT_EQ(Owner(image), "root:root 0640") << "the last user gives it back";
  EXPECT_LT(::getxattr(image.c_str(), "system.posix_acl_access", nullptr, 0), 0) << "no ACL left";
  EXPECT_FALSE(launcher::IdLeased(st.st_gid)) << "the shared group goes with the last user";
  EXPECT_EQ(Qlaunch({"destroy", "priv-cd-d"}).exit_code, 0);
}

TEST_F(LaunchPrivilegesTest, AnImageQemuCannotReachIsAClearErrorNamingTheDisk) {
  fs::path hidden = tmp() / "root-only-dir";
  fs::create_directories(hidden);
  fs::permissions(hidden, fs::perms::owner_all);  // 0700 root: not searchable for qlaunch-qemu
  fs::path image = Image("hidden.img", 0600, hidden);
  const std::string xml = DiskXml("priv-hidden", image, false);
  RunResult r = Qlaunch({"start", xml});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(xml + ":8: error: <disk>: the QEMU user +"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find(" cannot open " + image.string()),
            std::string::npos)
      << r.Describe();
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");
  ExpectNothingLeft("priv-hidden", HugepagesFree());
}

}  // namespace
}  // namespace qlaunch::testing
