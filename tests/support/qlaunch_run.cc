#include "support/qlaunch_run.h"
#include "support/slurp.h"
#include "support/build_paths.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace qlaunch::testing {

namespace {

std::string TempFile(const char* tag) {
  std::string tmpl = std::string("/tmp/qlaunch-run-") + tag + "-XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("mkstemp: " + std::string(std::strerror(errno)));
  ::close(fd);
  return tmpl;
}

}  // namespace

// QLAUNCH_TEST_QLAUNCH: another qlaunch binary (scripts/soak runs a copy, so that the build may go on).
std::string QlaunchBinary() {
  const char* other = std::getenv("QLAUNCH_TEST_QLAUNCH");
  return other && *other ? std::string(other) : std::string(QLAUNCH_BINARY_DIR) + "/qlaunch";
}

std::string RunResult::Describe() const {
  std::string s = timed_out ? "timed out" : signal ? "killed by signal " + std::to_string(signal)
                                                   : "exit code " + std::to_string(exit_code);
  return s + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
}

RunningProcess::RunningProcess(const std::vector<std::string>& argv, const Env& env, const RunLimits& limits) {
  out_path_ = TempFile("out");
  err_path_ = TempFile("err");
  std::vector<std::string> full = argv;
  if (full.empty() || full[0].empty() || full[0][0] != '/') full.insert(full.begin(), QlaunchBinary());
  std::vector<char*> cargv;
  for (auto& a : full) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid_ == 0) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    if (limits.address_space_bytes) {
      struct rlimit rl = {limits.address_space_bytes, limits.address_space_bytes};
      if (::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(125);
    }
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(out_path_.c_str(), O_WRONLY | O_TRUNC);
    int err = ::open(err_path_.c_str(), O_WRONLY | O_TRUNC);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
}

RunningProcess::~RunningProcess() {
  if (!waited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ::unlink(out_path_.c_str());
  ::unlink(err_path_.c_str());
}

std::string RunningProcess::ErrSoFar() const { return Slurp(err_path_); }

RunResult RunningProcess::Wait(std::chrono::milliseconds timeout) {
  RunResult r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  struct rusage usage {};
  for (;;) {
    pid_t got = ::wait4(pid_, &status, WNOHANG, &usage);
    if (got == pid_) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::wait4(pid_, &status, 0, &usage);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  waited_ = true;
  if (WIFEXITED(status) && !r.timed_out) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.max_rss_kib = usage.ru_maxrss;
  r.out = Slurp(out_path_);
  r.err = Slurp(err_path_);
  return r;
}

RunResult RunQlaunch(const std::vector<std::string>& args, const Env& env, std::chrono::milliseconds timeout,
                     const RunLimits& limits) {
  std::vector<std::string> argv = {QlaunchBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunningProcess p(argv, env, limits);
  return p.Wait(timeout);
}

}  // namespace qlaunch::testing
