// qlaunch run on real QEMU 7.2 (plain RAM, TCG; the guest is SeaBIOS alone, or Debian's kernel
// with a busybox initramfs): each exit status provoked for real, each lifecycle action exercised
// (tests/supervisor/ runs it under a real supervisord).
//   - a real guest powers itself off (kernel + initramfs, `poweroff -f`): exit 0, on_poweroff destroy;
//     the same through HMP: an ACPI S5 write to the PIIX4 PM control register (port 0x604, what
//     the guest kernel's poweroff does);
//   - kill -9 of QEMU: exit 5; a failed start: exit 1; SIGTERM with --shutdown-timeout 0: exit 4;
//   - SIGTERM to a guest that ignores the ACPI button: destroyed after the timeout, exit 4;
//   - on_reboot restart (QMP system_reset: the supervisor sees RESET, QEMU stays);
//   - on_crash preserve and destroy, through the pvpanic device (HMP 'o /b 0x505 1', the
//     guest's panic notifier write): preserved paused, or destroyed with exit 3.
// After each: no QEMU, no state, the pidfile gone.
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "support/launch_env.h"
#include "support/notify_socket.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class LaunchRunTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  }

  std::string Xml(const std::string& name, const std::string& lifecycle) {
    fs::path f = tmp() / (name + ".xml");
    std::ofstream(f) << "<domain type='qemu'>\n  <name>" << name << "</name>\n  <memory unit='MiB'>64</memory>\n"
                     << "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n"
                     // ACPI: the guest's poweroff and the power button (without <acpi/>, -no-acpi as libvirt)
                     << "  <features><acpi/></features>\n" << lifecycle
                     << "  <devices>\n    <emulator>" << kQemu72 << "</emulator>\n    <panic model='isa'/>\n"
                     << "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
    return f.string();
  }

  std::unique_ptr<RunningProcess> Run(const std::string& xml, const std::vector<std::string>& flags = {},
                                      const Env& extra = {}) {
    std::vector<std::string> argv = {QlaunchBinary(), "run", "--json"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(xml);
    Env env = BaseEnv();
    env.insert(extra.begin(), extra.end());
    return std::make_unique<RunningProcess>(argv, env);
  }

  // Waits until `qlaunch list` shows the domain in `state` ("" = gone); the QEMU pid or 0.
  pid_t WaitState(const std::string& name, const std::string& state, milliseconds timeout = milliseconds(30000)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      RunResult list = Qlaunch({"list", "--json"});
      nlohmann::json all = nlohmann::json::parse(list.out, nullptr, false);
      pid_t pid = 0;
      std::string got;
      if (all.is_array())
        for (const auto& e : all)
          if (e.value("name", "") == name) {
            got = e.value("state", "");
            pid = e["pid"].is_number() ? e["pid"].get<pid_t>() : 0;
          }
      if (got == state) return state.empty() ? 1 : pid;
      std::this_thread::sleep_for(milliseconds(50));
    }
    ADD_FAILURE() << name << " never reached state '" << state << "'";
    return 0;
  }

  void Hmp(const std::string& name, const std::string& command) {
    RunResult r = Qlaunch({"qemu-monitor-command", "--hmp", name, command});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
  }

  void ExpectGone(const std::string& name, pid_t pid) {
    EXPECT_TRUE(PidGone(pid)) << "QEMU " << pid << " still runs";
    EXPECT_FALSE(fs::exists(DomainStateDir(name)));
    EXPECT_TRUE(LivePidsWithCmdline(StateDir().string()).empty());
  }
};

TEST_F(LaunchRunTest, AGuestThatPowersItselfOffEndsTheRunWith0) {
  const std::string pidfile = (tmp() / "run.pid").string();
  auto run = Run(Xml("run-off", ""), {"--pidfile", pidfile});
  pid_t qemu = WaitState("run-off", "running");
  ASSERT_GT(qemu, 0);
  std::ifstream pf(pidfile);
  pid_t supervisor = 0;
  EXPECT_TRUE(pf >> supervisor);
  EXPECT_EQ(supervisor, run->pid());
  std::this_thread::sleep_for(milliseconds(500));  // SeaBIOS has set up the PM registers
  Hmp("run-off", "o /w 0x604 0x2000");             // SLP_EN | SLP_TYP=S5: the guest's poweroff
  RunResult r = run->Wait(std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("\"message\":\"the guest powered off: <on_poweroff> destroy\""), std::string::npos) << r.err;
  ExpectGone("run-off", qemu);
  EXPECT_FALSE(fs::exists(pidfile));
}

// A real guest: Debian's kernel and a busybox initramfs whose /init powers the machine off
// (reboot(2) -> ACPI S5), under TCG. It reports over a <serial type='file'>.
TEST_F(LaunchRunTest, ARealGuestThatPowersItselfOffEndsTheRunWith0) {
  std::string kernel;
  for (const auto& e : fs::directory_iterator("/boot"))
    if (e.path().filename().string().rfind("vmlinuz-", 0) == 0 && e.path().string() > kernel) kernel = e.path().string();
  if (kernel.empty()) GTEST_SKIP() << "no /boot/vmlinuz-* (scripts/setup installs linux-image-amd64)";
  // Copies in the test's own dir: qlaunch gives them to QEMU's user and back.
  const fs::path k = tmp() / "vmlinuz", initrd = tmp() / "initrd.gz", serial = tmp() / "serial.log";
  fs::copy_file(kernel, k);
  const std::string make = std::string(QLAUNCH_SOURCE_DIR) + "/tests/boot/make-poweroff-initramfs " + initrd.string();
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  const std::string xml = Xml("run-boot", "");
  {
    std::ifstream in(xml);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.replace(text.find("64</memory>"), 2, "256");  // a kernel and its initramfs need room
    text.replace(text.find("</os>"), 5,
                 "<kernel>" + k.string() + "</kernel><initrd>" + initrd.string() +
                     "</initrd><cmdline>console=ttyS0 quiet panic=-1 rdinit=/init</cmdline></os>");
    text.replace(text.find("<panic"), 0, "<serial type='file'><source path='" + serial.string() + "'/></serial>\n    ");
    std::ofstream(xml) << text;
  }
  auto run = Run(xml);
  RunResult r = run->Wait(std::chrono::seconds(180));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("the guest powered off: <on_poweroff> destroy"), std::string::npos) << r.err;
  std::ifstream log(serial);
  std::string console((std::istreambuf_iterator<char>(log)), {});
  EXPECT_NE(console.find("qlaunch-guest: up, powering off"), std::string::npos) << console.substr(0, 2000);
  EXPECT_FALSE(fs::exists(DomainStateDir("run-boot")));
  struct stat st {};
  ASSERT_EQ(::stat(k.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "the kernel was not given back";
}

TEST_F(LaunchRunTest, KilledQemuIs5FailedStartIs1) {
  auto run = Run(Xml("run-kill", ""));
  pid_t qemu = WaitState("run-kill", "running");
  ASSERT_GT(qemu, 0);
  ::kill(qemu, SIGKILL);
  RunResult r = run->Wait(std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 5) << r.Describe();
  EXPECT_NE(r.err.find("\"event\":\"qemu-ended\""), std::string::npos) << r.err;
  ExpectGone("run-kill", qemu);

  RunResult failed = RunningProcess({QlaunchBinary(), "run", Xml("run-fail", "")},
                                    [&] { Env e = BaseEnv(); e["QLAUNCH_FAULT"] = "spawn"; return e; }())
                         .Wait(std::chrono::seconds(30));
  EXPECT_EQ(failed.exit_code, 1) << failed.Describe();
  EXPECT_NE(failed.err.find("fault injected at phase spawn"), std::string::npos) << failed.Describe();
  ExpectNothingLeft("run-fail", HugepagesFree());
}

TEST_F(LaunchRunTest, SigtermDestroysAtOnceOrAfterTheTimeout) {
  for (const char* timeout : {"0", "1"}) {
    SCOPED_TRACE(std::string("--shutdown-timeout ") + timeout);
    auto run = Run(Xml("run-term", ""), {"--shutdown-timeout", timeout});
    pid_t qemu = WaitState("run-term", "running");
    ASSERT_GT(qemu, 0);
    ::kill(run->pid(), SIGHUP);  // ignored
    std::this_thread::sleep_for(milliseconds(200));
    EXPECT_FALSE(PidGone(qemu));
    const auto t0 = std::chrono::steady_clock::now();
    ::kill(run->pid(), SIGTERM);
    RunResult r = run->Wait(std::chrono::seconds(30));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 4) << r.Describe();
    if (std::string(timeout) == "1") {
      EXPECT_NE(r.err.find("ACPI power button"), std::string::npos) << r.err;
      EXPECT_GE(s, 1.0) << "destroyed before the timeout";
    }
    ExpectGone("run-term", qemu);
  }
}

TEST_F(LaunchRunTest, OnRebootRestartKeepsTheGuest) {
  auto run = Run(Xml("run-reboot", "  <on_reboot>restart</on_reboot>\n"), {"--shutdown-timeout", "0"});
  pid_t qemu = WaitState("run-reboot", "running");
  ASSERT_GT(qemu, 0);
  RunResult reset = Qlaunch({"qemu-monitor-command", "run-reboot", R"({"execute":"system_reset"})"});
  EXPECT_EQ(reset.exit_code, 0) << reset.Describe();
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(WaitState("run-reboot", "running"), qemu);
  ::kill(run->pid(), SIGTERM);
  RunResult r = run->Wait(std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 4) << r.Describe();
  EXPECT_NE(r.err.find("\"event\":\"reset\""), std::string::npos) << r.err;
  ExpectGone("run-reboot", qemu);
}

TEST_F(LaunchRunTest, OnCrashPreserveKeepsItPausedDestroyExits3) {
  auto run = Run(Xml("run-crash", "  <on_crash>preserve</on_crash>\n"), {"--shutdown-timeout", "0"});
  pid_t qemu = WaitState("run-crash", "running");
  ASSERT_GT(qemu, 0);
  Hmp("run-crash", "o /b 0x505 1");  // pvpanic: what the guest's panic notifier writes
  EXPECT_EQ(WaitState("run-crash", "guest-panicked"), qemu);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(PidGone(qemu)) << "on_crash preserve destroyed it";
  ::kill(run->pid(), SIGTERM);
  RunResult r = run->Wait(std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 4) << r.Describe();
  EXPECT_NE(r.err.find("<on_crash> preserve"), std::string::npos) << r.err;
  ExpectGone("run-crash", qemu);

  run = Run(Xml("run-crash2", "  <on_crash>destroy</on_crash>\n"));
  qemu = WaitState("run-crash2", "running");
  ASSERT_GT(qemu, 0);
  Hmp("run-crash2", "o /b 0x505 1");
  r = run->Wait(std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  ExpectGone("run-crash2", qemu);
}

// systemd's readiness: READY=1 on $NOTIFY_SOCKET once the guest runs.
TEST_F(LaunchRunTest, NotifiesReadinessOnNotifySocket) {
  NotifySocket notify((tmp() / "notify.sock").string());
  ASSERT_TRUE(notify.ok());
  auto run = Run(Xml("run-notify", ""), {"--shutdown-timeout", "0"}, {{"NOTIFY_SOCKET", notify.path()}});
  EXPECT_EQ(notify.Receive(std::chrono::seconds(30)), "READY=1\nMAINPID=" + std::to_string(run->pid()) + "\n");
  pid_t qemu = WaitState("run-notify", "running");
  ::kill(run->pid(), SIGTERM);
  EXPECT_EQ(run->Wait(std::chrono::seconds(30)).exit_code, 4);
  ExpectGone("run-notify", qemu);
}

}  // namespace
}  // namespace qlaunch::testing
