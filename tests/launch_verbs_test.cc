// The everyday verbs on a real QEMU 7.2 domain (plain RAM, TCG, started paused-then-running by
// qlaunch start): suspend and resume as QEMU reports them, reboot (a reset QEMU counts),
// shutdown of a guest that ignores ACPI (timeout, then --force), qemu-monitor-command in QMP and
// HMP, list's memory and vCPU columns, and a clear error for a domain that is not running.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

class LaunchVerbsTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    xml_ = (tmp() / "verbs.xml").string();
    std::ofstream(xml_) << "<domain type='qemu'>\n  <name>verbs</name>\n  <memory unit='MiB'>96</memory>\n"
                           "  <vcpu>2</vcpu>\n  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n"
                           "  <devices>\n    <emulator>" << kQemu72 << "</emulator>\n"
                           "    <serial type='pty'/>\n    <memballoon model='none'/>\n  </devices>\n</domain>\n";
    RunResult r = Qlaunch({"start", "--json", xml_});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    pid_ = nlohmann::json::parse(r.out).at("pid").get<pid_t>();
  }
  void TearDown() override {
    if (pid_ > 0 && !PidGone(pid_)) Qlaunch({"destroy", "verbs"});
    LaunchTest::TearDown();
  }

  std::string State() {
    RunResult r = Qlaunch({"qemu-monitor-command", "verbs", R"({"execute":"query-status"})"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return nlohmann::json::parse(r.out).at("return").value("status", "");
  }

  std::string xml_;
  pid_t pid_ = 0;
};

TEST_F(LaunchVerbsTest, SuspendAndResumeAsQemuReportsThem) {
  EXPECT_EQ(State(), "running");
  RunResult s = Qlaunch({"suspend", "verbs"});
  EXPECT_EQ(s.exit_code, 0) << s.Describe();
  EXPECT_EQ(s.out, "domain verbs suspended\n");
  EXPECT_EQ(State(), "paused");
  RunResult list = Qlaunch({"list", "--json"});
  EXPECT_EQ(nlohmann::json::parse(list.out).at(0).at("state"), "paused") << list.Describe();
  RunResult r = Qlaunch({"resume", "verbs"});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(State(), "running");
}

TEST_F(LaunchVerbsTest, RebootResetsTheMachine) {
  // Paused, so the vCPUs cannot move on: after the reset the first vCPU is at the x86 reset
  // vector (CS f000, EIP fff0) as QEMU itself reports (HMP 'info registers'); before, running
  // SeaBIOS for a while, it was not.
  ASSERT_EQ(Qlaunch({"suspend", "verbs"}).exit_code, 0);
  RunResult before = Qlaunch({"qemu-monitor-command", "--hmp", "verbs", "info registers"});
  EXPECT_EQ(before.out.find("EIP=0000fff0"), std::string::npos) << before.out;
  RunResult r = Qlaunch({"reboot", "verbs"});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "domain verbs reset\n");
  RunResult after = Qlaunch({"qemu-monitor-command", "--hmp", "verbs", "info registers"});
  EXPECT_NE(after.out.find("EIP=0000fff0"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("CS =f000"), std::string::npos) << after.out;
  ASSERT_EQ(Qlaunch({"resume", "verbs"}).exit_code, 0);
  EXPECT_EQ(State(), "running");
  EXPECT_FALSE(PidGone(pid_)) << "a reboot must not end QEMU";
}

TEST_F(LaunchVerbsTest, ShutdownOfAGuestThatIgnoresAcpiTimesOutThenForces) {
  // No guest OS: nothing answers the ACPI power button.
  RunResult r = Qlaunch({"shutdown", "--timeout", "1", "verbs"});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("domain verbs did not shut down within 1 s"), std::string::npos) << r.Describe();
  EXPECT_FALSE(PidGone(pid_));
  EXPECT_EQ(State(), "running");
  r = Qlaunch({"shutdown", "--timeout", "0.5", "--force", "verbs"});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.out.find("did not shut down within 0.5 s; destroyed (pid " + std::to_string(pid_)), std::string::npos)
      << r.Describe();
  ExpectHostClean("verbs", pid_, HugepagesFree());
}

TEST_F(LaunchVerbsTest, QemuMonitorCommandInQmpAndHmp) {
  RunResult q = Qlaunch({"qemu-monitor-command", "verbs", R"({"execute":"query-name"})"});
  ASSERT_EQ(q.exit_code, 0) << q.Describe();
  EXPECT_EQ(nlohmann::json::parse(q.out), nlohmann::json::parse(R"({"return":{"name":"verbs"}})"));
  RunResult cpus = Qlaunch({"qemu-monitor-command", "verbs", R"({"execute":"query-cpus-fast"})"});
  ASSERT_EQ(cpus.exit_code, 0) << cpus.Describe();
  EXPECT_EQ(nlohmann::json::parse(cpus.out).at("return").size(), 2u);
  RunResult h = Qlaunch({"qemu-monitor-command", "--hmp", "verbs", "info name"});
  EXPECT_EQ(h.exit_code, 0) << h.Describe();
  EXPECT_NE(h.out.find("verbs"), std::string::npos) << h.Describe();
  // QEMU's own error, and input that is not a QMP command.
  RunResult bad = Qlaunch({"qemu-monitor-command", "verbs", R"({"execute":"no-such-command"})"});
  EXPECT_EQ(bad.exit_code, 1) << bad.Describe();
  EXPECT_NE(bad.err.find("no-such-command"), std::string::npos) << bad.Describe();
  RunResult junk = Qlaunch({"qemu-monitor-command", "verbs", "query-status"});
  EXPECT_EQ(junk.exit_code, 1) << junk.Describe();
  EXPECT_NE(junk.err.find("COMMAND must be a QMP command as JSON"), std::string::npos) << junk.Describe();
}

// console: the guest's UART output reaches the terminal and what is typed reaches the UART.
// The guest side is driven through HMP port I/O, as the guest CPU would: a write to the 16550's
// transmit register (0x3f8), and a read of its receive register.
TEST_F(LaunchVerbsTest, ConsoleCarriesBothWaysAndCtrlBracketLeaves) {
  const fs::path fifo = tmp() / "console.in", err = tmp() / "console.err";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Env env = BaseEnv();
  RunningProcess console({"/bin/sh", "-c", "exec \"$0\" console verbs <\"$1\" 2>\"$2\"", QlaunchBinary(), fifo.string(),
                          err.string()},
                         env);
  int in = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(in, 0);
  std::string connected;
  for (int i = 0; i < 200 && connected.find("Connected to domain verbs") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream e(err);
    connected.assign(std::istreambuf_iterator<char>(e), {});
  }
  ASSERT_NE(connected.find("Escape character is ^]"), std::string::npos) << connected;
  RunResult out = Qlaunch({"qemu-monitor-command", "--hmp", "verbs", "o /b 0x3f8 0x51"});  // the guest prints 'Q'
  EXPECT_EQ(out.exit_code, 0) << out.Describe();
  ASSERT_EQ(::write(in, "h", 1), 1);  // the user types 'h'
  std::string rbr;
  for (int i = 0; i < 100 && rbr.find("0x68") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rbr = Qlaunch({"qemu-monitor-command", "--hmp", "verbs", "i /b 0x3f8"}).out;
  }
  EXPECT_NE(rbr.find("= 0x68"), std::string::npos) << "the guest's UART did not receive 'h': " << rbr;
  ASSERT_EQ(::write(in, "\x1d", 1), 1);  // Ctrl-]
  ::close(in);
  RunResult r = console.Wait(std::chrono::seconds(10));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "Q") << r.Describe();
  EXPECT_FALSE(PidGone(pid_)) << "leaving the console must not end the domain";
}

TEST_F(LaunchVerbsTest, ListShowsMemoryAndVcpus) {
  RunResult list = Qlaunch({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  nlohmann::json e = nlohmann::json::parse(list.out).at(0);
  EXPECT_EQ(e.at("memory_bytes"), 96u << 20);
  EXPECT_EQ(e.at("vcpus"), 2);
  RunResult table = Qlaunch({"list"});
  EXPECT_NE(table.out.find("Memory"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("96 MiB"), std::string::npos) << table.out;
}

TEST_F(LaunchVerbsTest, EveryVerbNamesADomainThatIsNotRunning) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"suspend", "nope"}, {"resume", "nope"}, {"reboot", "nope"},
                                             {"shutdown", "nope"},
                                             {"console", "nope"},
                                             {"dominfo", "nope"},
                                             {"dumpxml", "nope"},
                                             {"domblklist", "nope"},
                                             {"domiflist", "nope"},
                                             {"change-media", "nope", "sda", "/etc/hostname"},
                                             {"setmem", "nope", "1G"},
                                             {"setvcpus", "nope", "2"},
                                             {"update-memory-device", "nope", "--requested-size", "1G"},
                                             {"qemu-monitor-command", "nope", R"({"execute":"query-status"})"}}) {
    RunResult r = Qlaunch(args);
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("domain nope is not running"), std::string::npos) << r.Describe();
  }
}

}  // namespace
}  // namespace qlaunch::testing
