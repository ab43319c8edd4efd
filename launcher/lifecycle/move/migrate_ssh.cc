#include "launcher/lifecycle/move/migrate_ssh.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/shell_quote.h"
#include "launcher/lifecycle/observe/domain_xml.h"
#include "launcher/lifecycle/session/domain_state.h"
#include "launcher/lifecycle/start/start_interrupt.h"

extern char** environ;

namespace qlaunch::launcher {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct ChildResult {
  int status = 0;  // the exit code; 128 + N when killed by signal N
  std::string out, err;
};

void ClosePair(int fds[2]) {
  for (int i = 0; i < 2; ++i)
    if (fds[i] >= 0) ::close(fds[i]);
}

// Runs argv (argv[0] looked up in $PATH) in its own process group, so a Ctrl-C on our terminal
// reaches us alone: `input` on its stdin, stdout and stderr collected until it exits.
ChildResult RunChild(const std::vector<std::string>& argv, const std::string& input) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ClosePair(in), ClosePair(out), ClosePair(err);
    throw std::runtime_error(std::string("cannot make pipes for ") + argv[0] + ": " + std::strerror(e));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]), ::close(out[1]), ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]), ::close(out[0]), ::close(err[0]);
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  // A child that exits before reading all its input must not kill us with SIGPIPE.
  struct sigaction ign{}, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  ChildResult r;
  size_t written = 0;
  int fds[3] = {in[1], out[0], err[0]};
  if (input.empty()) {
    ::close(fds[0]);
    fds[0] = -1;
  }
  while (fds[1] >= 0 || fds[2] >= 0) {
    pollfd p[3] = {{fds[0], POLLOUT, 0}, {fds[1], POLLIN, 0}, {fds[2], POLLIN, 0}};
    if (::poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0] >= 0 && p[0].revents) {
      const ssize_t n = ::write(fds[0], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EINTR && errno != EAGAIN) written = input.size();  // it closed its stdin
      if (written == input.size()) {
        ::close(fds[0]);
        fds[0] = -1;
      }
    }
    for (int i = 1; i < 3; ++i) {
      if (fds[i] < 0 || !p[i].revents) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i], buf, sizeof buf);
      if (n > 0) (i == 1 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR)) {
        ::close(fds[i]);
        fds[i] = -1;
      }
    }
  }
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  ::sigaction(SIGPIPE, &old, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

std::vector<std::string> SshArgv(const MigrationUri& uri, const SshMigrateOptions& o,
                                 const std::string& remote_command) {
  std::vector<std::string> argv{o.ssh};
  if (uri.port != 0) argv.insert(argv.end(), {"-p", std::to_string(uri.port)});
  if (!uri.user.empty()) argv.insert(argv.end(), {"-l", uri.user});
  if (!o.identity.empty()) argv.insert(argv.end(), {"-i", o.identity});
  argv.insert(argv.end(), {"-o", "BatchMode=yes"});
  for (const auto& opt : o.ssh_options) argv.insert(argv.end(), {"-o", opt});
  argv.insert(argv.end(), {"--", uri.host, remote_command});
  return argv;
}

std::string RemoteStartCommand(const SshMigrateOptions& o, const std::string& connect_host) {
  const bool v6 = connect_host.find(':') != std::string::npos;
  return o.remote_qlaunch + " start --incoming " + (v6 ? "tcp:[::]:0" : "tcp:0.0.0.0:0") + " --json -";
}

std::string RemoteDestroyCommand(const SshMigrateOptions& o, const std::string& name) {
  return o.remote_qlaunch + " destroy " + ShellQuote(name);
}

std::string RemoteDominfoCommand(const SshMigrateOptions& o, const std::string& name) {
  return o.remote_qlaunch + " dominfo --json " + ShellQuote(name);
}

std::string DestinationHasGuest(int status, const std::string& out, const std::string& err, const std::string& want) {
  if (status == 255) return "ssh failed: " + Trimmed(err);
  if (status != 0) return "its dominfo exited " + std::to_string(status) + ": " + Trimmed(err);
  const json info = json::parse(out, nullptr, false);
  if (!info.is_object()) return "its dominfo printed no JSON: " + Trimmed(out);
  const std::string state = info.value("state", "");
  if (state == want) return "";
  return "it is " + (state.empty() ? std::string("in no state") : state) + ", not " + want;
}

std::string ConnectHost(const MigrationUri& uri, const SshMigrateOptions& o) {
  return o.migrate_host.empty() ? uri.host : o.migrate_host;
}

std::string ConnectUri(const std::string& connect_host, const std::string& incoming) {
  MigrationUri listen;
  try {
    listen = ParseMigrationUri(incoming, UriUse::kIncoming, "/");
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("the destination reported no usable address: ") + e.what());
  }
  if (listen.kind != MigrationUri::Kind::kTcp || listen.port == 0)
    throw std::runtime_error("the destination reported '" + incoming + "', not tcp:HOST:PORT with a port");
  MigrationUri to;
  to.host = connect_host;
  to.port = listen.port;
  return to.ForQemu();
}

MigrateReport MigrateOverSsh(const StateDir& state, MigrateOptions opts, const SshMigrateOptions& ssh) {
  const MigrationUri uri = ParseMigrationUri(opts.uri, UriUse::kMigrate, "/");
  if (uri.kind != MigrationUri::Kind::kSsh) throw std::invalid_argument("MigrateOverSsh: not an ssh:// URI");
  const std::string xml = LiveDomainXmlOf(state, opts.name, Verb::kMigrate);
  const std::string connect_host = ConnectHost(uri, ssh);
  const std::string ssh_uri = opts.uri, where = "the destination " + opts.uri;

  // --- prepare the destination ---------------------------------------------------------------
  const auto begin = Clock::now();
  ChildResult start;
  int signal = 0;
  {
    StartInterrupt interrupt;  // taken once the remote start is back (below)
    start = RunChild(SshArgv(uri, ssh, RemoteStartCommand(ssh, connect_host)), xml);
    signal = interrupt.signal();
  }
  const double start_ms = MsSince(begin);
  if (start.status != 0) {
    std::string why = Trimmed(start.err);
    if (why.empty()) why = "no message";
    throw std::runtime_error("preparing " + where + " failed (" +
                             (start.status == 255 ? "ssh" : ssh.remote_qlaunch + " start") + " exited " +
                             std::to_string(start.status) + "): " + why + "; nothing was started, domain " +
                             opts.name + " runs on here");
  }
  // A destination whose QEMU has ended already (killed, or quit on the cut stream) is "not running"
  // to the remote destroy, which has cleared its stale state by then (destroy.h): gone, as asked.
  auto tear_down = [&](const std::string& msg) -> std::runtime_error {
    const ChildResult d = RunChild(SshArgv(uri, ssh, RemoteDestroyCommand(ssh, opts.name)), "");
    if (d.status == 0) return std::runtime_error(msg + "; " + where + " was destroyed again");
    if (d.status != 255 && d.err.find("domain " + opts.name + " is not running") != std::string::npos)
      return std::runtime_error(msg + "; " + where + " had ended already, nothing of it is left there");
    return std::runtime_error(msg + "; destroying " + where + " failed too: " + Trimmed(d.err));
  };
  json remote;
  std::string connect_uri;
  try {
    remote = json::parse(start.out);
    connect_uri = ConnectUri(connect_host, remote.at("incoming").get<std::string>());
  } catch (const std::exception& e) {
    throw tear_down("the remote start's report is not what qlaunch prints (" + std::string(e.what()) +
                    "): " + Trimmed(start.out));
  }
  if (signal)
    throw tear_down("migration of domain " + opts.name + " " + InterruptedBy(signal) +
                    " while " + where + " was prepared; the domain stays here");

  // --- migrate ----------------------------------------------------------------------------------
  bool completed = false;
  opts.completed = &completed;
  const std::string dominfo = RemoteDominfoCommand(ssh, opts.name);
  opts.confirm = [&](const std::string& want) {
    // A destination whose qlaunch has not yet seen QEMU take the guest ("incoming") is asked
    // again for a few seconds.
    std::string why;
    for (int i = 0; i < 25; ++i) {
      const ChildResult d = RunChild(SshArgv(uri, ssh, dominfo), "");
      why = DestinationHasGuest(d.status, d.out, d.err, want);
      if (why.empty() || why.find("it is incoming") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return why;
  };
  opts.uri = connect_uri;
  MigrateReport r;
  try {
    r = MigrateDomain(state, opts);
  } catch (const std::exception& e) {
    if (completed) throw;  // the guest runs over there: the destination stays
    throw tear_down(e.what());
  }
  r.destination = json{{"ssh", ssh_uri}, {"incoming", remote.at("incoming")}, {"uri", connect_uri},
                       {"pid", remote.value("pid", json())}, {"start_ms", start_ms},
                       {"timings_ms", remote.value("timings_ms", json::object())}};
  r.wall_ms += start_ms;
  return r;
}

}  // namespace qlaunch::launcher
