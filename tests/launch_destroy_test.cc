// destroy's escalation on real QEMU 7.2: QMP `quit` first, SIGTERM when QMP cannot be used,
// SIGKILL when SIGTERM does not end QEMU either. DestroyDomain is called in-process with short
// waits (the CLI's are 10 s / 5 s / 10 s); each case checks what ended QEMU and that the host
// is clean afterwards.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "launcher/lifecycle/session/destroy.h"
#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class LaunchDestroyTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    if (DefaultHugepageBytes() != (2u << 20)) GTEST_SKIP() << "these tests assume 2 MiB default hugepages";
    pool_.emplace(HugepagePool::AtLeast(domain_.Bytes() / (2u << 20) + 8));
    if (!pool_->ok()) GTEST_SKIP() << pool_->error();
    free_before_ = HugepagesFree();
  }

  // Starts the small domain; its QEMU's pid, or 0 after a failed assertion.
  pid_t Start() {
    RunResult r = Qlaunch({"start", "--json", "--qemu", kQemu72, WriteDomain(domain_)});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    if (r.exit_code != 0) return 0;
    return nlohmann::json::parse(r.out)["pid"].get<pid_t>();
  }

  // Destroys the domain and expects `how` to have ended QEMU `pid`, leaving the host clean.
  void DestroyExpecting(pid_t pid, const std::string& how) {
    launcher::DestroyOptions opts;
    opts.qmp_timeout = milliseconds(2000);  // generous: a loaded machine must not turn quit into SIGTERM
    opts.quit_wait = milliseconds(5000);
    opts.term_wait = milliseconds(3000);
    opts.kill_wait = milliseconds(10000);
    launcher::DestroyResult r = launcher::DestroyDomain(launcher::StateDir(StateDir()), domain_.name, opts);
    EXPECT_EQ(r.pid, pid);
    EXPECT_EQ(r.how, how);
    ExpectHostClean(domain_.name, pid, free_before_);
  }

  SmallDomain domain_;
  std::optional<HugepagePool> pool_;  // restored after TearDown has reaped what a failure left
  uint64_t free_before_ = 0;
};

TEST_F(LaunchDestroyTest, QuitOverQmp) {
  pid_t pid = Start();
  ASSERT_NE(pid, 0);
  DestroyExpecting(pid, "quit");
}

// QEMU's QMP monitor serves one client at a time: while we hold the connection, destroy's
// connect is never greeted, so it must fall back to SIGTERM, which QEMU honours.
TEST_F(LaunchDestroyTest, SigtermWhenQmpIsBusy) {
  pid_t pid = Start();
  ASSERT_NE(pid, 0);

  const std::string socket_path = (DomainStateDir(domain_.name) / "qmp.sock").string();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  char greeting[64];
  ASSERT_GT(::read(fd, greeting, sizeof greeting), 0) << "QEMU did not greet the first client";

  DestroyExpecting(pid, "SIGTERM");
  ::close(fd);
}

// A stopped QEMU answers nothing and keeps SIGTERM pending: only SIGKILL ends it.
TEST_F(LaunchDestroyTest, SigkillWhenQemuIgnoresEverythingElse) {
  pid_t pid = Start();
  ASSERT_NE(pid, 0);
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);

  DestroyExpecting(pid, "SIGKILL");
}

}  // namespace
}  // namespace qlaunch::testing
