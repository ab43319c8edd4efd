// Running the built qlaunch binary (QLAUNCH_BINARY_DIR "/qlaunch") from tests: exit code,
// stdout and stderr captured (through temporary files, so nothing can block on a full pipe),
// extra environment variables on top of the test's own.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qlaunch::testing {

std::string QlaunchBinary();

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal or timed out
  int signal = 0;      // the signal that ended it
  bool timed_out = false;
  long max_rss_kib = 0;  // peak resident set size of the process (wait4's ru_maxrss)
  std::string out, err;

  std::string Describe() const;  // for assertion messages: exit code and both streams
};

using Env = std::map<std::string, std::string>;

// Resource limits set in the child before exec; 0 = unlimited (inherited).
struct RunLimits {
  uint64_t address_space_bytes = 0;  // RLIMIT_AS
};

// A qlaunch (or any binary when argv[0] is an absolute path) running in the background.
class RunningProcess {
 public:
  RunningProcess(const std::vector<std::string>& argv, const Env& env, const RunLimits& limits = {});
  ~RunningProcess();  // kills it (SIGKILL) if it still runs
  RunningProcess(const RunningProcess&) = delete;
  RunningProcess& operator=(const RunningProcess&) = delete;

  pid_t pid() const { return pid_; }
  // What it has written to stderr so far (while it runs).
  std::string ErrSoFar() const;
  // Waits up to `timeout`; then SIGKILLs it and reports timed_out.
  RunResult Wait(std::chrono::milliseconds timeout = std::chrono::minutes(2));

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
  bool waited_ = false;
};

// qlaunch ARGS... with `env` added to the environment; waits up to `timeout`.
RunResult RunQlaunch(const std::vector<std::string>& args, const Env& env = {},
                     std::chrono::milliseconds timeout = std::chrono::minutes(2), const RunLimits& limits = {});

}  // namespace qlaunch::testing
