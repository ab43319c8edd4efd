// qlaunch@.service (packaging/systemd/) run as systemd runs it, without systemd (it is not PID 1
// on CI machines): its ExecStart expanded as systemd expands it (%I, ${VAR} from Environment=,
// with a `systemctl edit` drop-in's Environment= over the unit's), the process given
// $NOTIFY_SOCKET (Type=notify), stopped with its KillSignal to the main process alone
// (KillMode=mixed), its exit status judged by SuccessExitStatus= and Restart=/
// RestartPreventExitStatus= as systemd judges it. The domain: a defined one, 64 MiB of plain RAM
// under TCG, with a pvpanic device for <on_crash>. `systemd-analyze verify` of the installed unit
// is tests/packaging/install-test's.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "support/build_paths.h"
#include "support/launch_env.h"
#include "support/notify_socket.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// The unit's [Unit] and [Service] settings; a key given twice keeps each value, in order.
using Settings = std::multimap<std::string, std::string>;

Settings ReadUnit(const fs::path& file) {
  Settings out;
  std::ifstream in(file);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line;
      continue;
    }
    const size_t eq = line.find('=');
    if (eq != std::string::npos) out.emplace(section + line.substr(0, eq), line.substr(eq + 1));
  }
  return out;
}

std::vector<std::string> Values(const Settings& s, const std::string& key) {
  std::vector<std::string> out;
  for (auto [it, end] = s.equal_range(key); it != end; ++it) out.push_back(it->second);
  return out;
}

std::set<int> Statuses(const Settings& s, const std::string& key) {
  std::set<int> out;
  for (const std::string& v : Values(s, key)) {
    std::istringstream words(v);
    for (int n; words >> n;) out.insert(n);
  }
  return out;
}

class SystemdUnitFileTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    unit_ = ReadUnit(fs::path(QLAUNCH_SOURCE_DIR) / "packaging/systemd/qlaunch@.service");
    ASSERT_FALSE(unit_.empty());
  }

  Env WithConfig() {
    Env e = BaseEnv();
    e["QLAUNCH_CONFIG_DIR"] = (tmp() / "config").string();
    return e;
  }

  // Defines `name` with `on_crash`.
  void Define(const std::string& name, const std::string& on_crash) {
    const fs::path f = tmp() / (name + ".xml");
    std::ofstream(f) << "<domain type='qemu'>\n  <name>" << name << "</name>\n  <memory unit='MiB'>64</memory>\n"
                     << "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n"
                     << "  <features><acpi/></features>\n  <on_crash>" << on_crash << "</on_crash>\n"
                     << "  <devices>\n    <emulator>" << kQemu72 << "</emulator>\n    <panic model='isa'/>\n"
                     << "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
    RunResult r = RunQlaunch({"define", f.string()}, WithConfig());
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
  }

  // ExecStart for instance `name` as systemd runs it: the environment of Environment= (then the
  // drop-in's `override`), specifiers and ${VAR} expanded, split into words; /usr/bin/qlaunch is
  // this build's binary.
  std::vector<std::string> ExecStart(const std::string& name, const Env& override, Env* env) {
    for (const std::string& assignment : Values(unit_, "[Service]Environment")) {
      const size_t eq = assignment.find('=');
      (*env)[assignment.substr(0, eq)] = assignment.substr(eq + 1);
    }
    for (const auto& [k, v] : override) (*env)[k] = v;
    const std::vector<std::string> lines = Values(unit_, "[Service]ExecStart");
    EXPECT_EQ(lines.size(), 1u);
    std::vector<std::string> argv;
    std::istringstream words(lines.at(0));
    for (std::string w; words >> w;) {
      EXPECT_EQ(w.find_first_of("\"'\\"), std::string::npos) << "a quoted word: " << w;
      if (w == "%I") w = name;  // the instance, unescaped (the names here need no escaping)
      std::smatch m;
      if (std::regex_match(w, m, std::regex("\\$\\{(\\w+)\\}"))) w = env->count(m[1]) ? env->at(m[1]) : "";
      EXPECT_EQ(w.find('%'), std::string::npos) << "a specifier left: " << w;
      argv.push_back(w);
    }
    EXPECT_EQ(argv.at(0), "/usr/bin/qlaunch");
    argv[0] = QlaunchBinary();
    return argv;
  }

  pid_t QemuOf(const std::string& name) {
    RunResult list = RunQlaunch({"list", "--json"}, WithConfig());
    const nlohmann::json all = nlohmann::json::parse(list.out, nullptr, false);
    if (all.is_array())
      for (const auto& e : all)
        if (e.value("name", "") == name && e.value("state", "") == "running" && e["pid"].is_number())
          return e["pid"].get<pid_t>();
    return 0;
  }

  // Starts the unit's service for `name`: its main process and, once READY=1 came, QEMU's pid.
  std::unique_ptr<RunningProcess> StartService(const std::string& name, pid_t* qemu) {
    NotifySocket notify((tmp() / "notify.sock").string());
    EXPECT_TRUE(notify.ok());
    Env env = WithConfig();
    env["NOTIFY_SOCKET"] = notify.path();
    // `systemctl edit qlaunch@NAME`: a second to answer the power button, not a minute.
    const std::vector<std::string> argv = ExecStart(name, {{"QLAUNCH_SHUTDOWN_TIMEOUT", "1"}}, &env);
    auto main = std::make_unique<RunningProcess>(argv, env);
    // NotifyAccess=main: the message comes from the main process.
    EXPECT_EQ(notify.Receive(std::chrono::seconds(60)), "READY=1\nMAINPID=" + std::to_string(main->pid()) + "\n")
        << main->ErrSoFar();
    *qemu = QemuOf(name);
    EXPECT_GT(*qemu, 0) << "not running once READY=1 came";
    return main;
  }

  // How systemd judges a main process that exited with `code`: a clean stop, or a failure that
  // Restart=on-failure restarts or RestartPreventExitStatus= keeps down.
  enum class Verdict { kSuccess, kRestart, kStaysDown };
  Verdict Judge(int code) {
    if (code == 0 || Statuses(unit_, "[Service]SuccessExitStatus").count(code)) return Verdict::kSuccess;
    EXPECT_EQ(Values(unit_, "[Service]Restart"), std::vector<std::string>{"on-failure"});
    return Statuses(unit_, "[Service]RestartPreventExitStatus").count(code) ? Verdict::kStaysDown : Verdict::kRestart;
  }

  void ExpectGone(const std::string& name, pid_t qemu) {
    if (qemu > 0) ExpectQemuGone(qemu);
    EXPECT_FALSE(fs::exists(DomainStateDir(name)));
    EXPECT_TRUE(LivePidsWithCmdline(StateDir().string()).empty());
  }

  Settings unit_;
};

TEST_F(SystemdUnitFileTest, OrderedAfterFilesystemsAndPoolsStoppedBySignal) {
  std::string after;
  for (const std::string& v : Values(unit_, "[Unit]After")) after += v + " ";
  for (const char* unit : {"local-fs.target", "systemd-sysctl.service", "dev-hugepages.mount", "qlaunch-hugepages.service"})
    EXPECT_NE(after.find(unit), std::string::npos) << unit << " not in After=" << after;
  EXPECT_EQ(Values(unit_, "[Service]Type"), std::vector<std::string>{"notify"});
  EXPECT_EQ(Values(unit_, "[Service]KillMode"), std::vector<std::string>{"mixed"});
  EXPECT_TRUE(Values(unit_, "[Service]ExecStop").empty()) << "the stop is the KillSignal";
  EXPECT_TRUE(Values(unit_, "[Service]KillSignal").empty()) << "SIGTERM, systemd's default, is what run acts on";
  // The stop's timeout leaves room for the shutdown's.
  Env env;
  const std::vector<std::string> argv = ExecStart("vm", {}, &env);
  const auto timeout = std::find(argv.begin(), argv.end(), "--shutdown-timeout");
  ASSERT_NE(timeout, argv.end());
  EXPECT_LT(std::stoi(*(timeout + 1)), std::stoi(Values(unit_, "[Service]TimeoutStopSec").at(0)));
  EXPECT_EQ(argv.back(), "vm");
}

// The VM comes up (READY=1), systemd's stop (SIGTERM to the main process) takes it down through
// the ACPI power button, destroyed after the drop-in's timeout: exit 4, a clean stop. A guest that
// powers off: 0. A guest panic with <on_crash>destroy: 3, not restarted. QEMU killed: 5, restarted.
TEST_F(SystemdUnitFileTest, ExecStartRunsTheDomainAndTheExitStatusIsJudgedAsTheUnitSays) {
  const std::string name = "qldef-unit";
  Define(name, "destroy");
  pid_t qemu = 0;
  {
    SCOPED_TRACE("systemctl stop");
    auto main = StartService(name, &qemu);
    ASSERT_GT(qemu, 0);
    ::kill(main->pid(), SIGTERM);
    RunResult r = main->Wait(std::chrono::seconds(std::stoi(Values(unit_, "[Service]TimeoutStopSec").at(0))));
    EXPECT_EQ(r.exit_code, 4) << r.Describe();
    EXPECT_NE(r.err.find("ACPI power button"), std::string::npos) << r.err;
    EXPECT_EQ(Judge(r.exit_code), Verdict::kSuccess);
    ExpectGone(name, qemu);
  }
  // The service started, `end` done to it: the main process's exit status and systemd's verdict.
  auto ends = [&](const char* what, const std::function<void()>& end, int want, Verdict verdict) {
    SCOPED_TRACE(what);
    auto main = StartService(name, &qemu);
    ASSERT_GT(qemu, 0);
    end();
    RunResult r = main->Wait(std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, want) << r.Describe();
    EXPECT_EQ(Judge(r.exit_code), verdict);
    ExpectGone(name, qemu);
  };
  ends("the guest powers off", [&] {
    std::this_thread::sleep_for(milliseconds(500));  // SeaBIOS has set up the PM registers
    RunQlaunch({"qemu-monitor-command", "--hmp", name, "o /w 0x604 0x2000"}, WithConfig());  // ACPI S5
  }, 0, Verdict::kSuccess);
  ends("the guest panics, <on_crash>destroy", [&] {
    RunQlaunch({"qemu-monitor-command", "--hmp", name, "o /b 0x505 1"}, WithConfig());  // pvpanic
  }, 3, Verdict::kStaysDown);
  ends("QEMU killed", [&] { ::kill(qemu, SIGKILL); }, 5, Verdict::kRestart);
}

}  // namespace
}  // namespace qlaunch::testing
