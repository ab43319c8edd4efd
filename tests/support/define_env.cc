#include "support/define_env.h"

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace qlaunch::testing {

std::pair<int, std::string> DefineTest::OnTerminal(const std::vector<std::string>& args, Env extra,
                                                const std::vector<std::string>& answers) {
  Env env = BaseEnv();
  extra["QLAUNCH_CONFIG_DIR"] = ConfigDir().string();
  extra["TMPDIR"] = (tmp() / "edit").string();
  extra.emplace("VISUAL", "");
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> argv = {QlaunchBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  EXPECT_GT(pid, 0);
  std::string output;
  size_t typed = 0;  // answers typed so far: one per prompt seen
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: the terminal's other end is closed, qlaunch is gone
    output.append(buf, n);
    size_t prompts = 0;
    for (size_t at = output.find("[y/n]: "); at != std::string::npos; at = output.find("[y/n]: ", at + 1)) ++prompts;
    for (; typed < prompts && typed < answers.size(); ++typed) {
      const std::string a = answers[typed] + "\n";
      EXPECT_EQ(::write(master, a.data(), a.size()), static_cast<ssize_t>(a.size()));
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace qlaunch::testing
