// qlaunch console: attach the terminal to a running domain's serial console, like `virsh console`.
#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

namespace {

constexpr char kEscape = 0x1d;  // Ctrl-]

struct Options {
  std::string name, devname;
};

// Raw mode on a terminal for as long as it lives; the old settings come back however we leave.
class RawTerminal {
 public:
  explicit RawTerminal(int fd) : fd_(fd) {
    if (!::isatty(fd) || ::tcgetattr(fd, &saved_) != 0) return;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    active_ = ::tcsetattr(fd, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(fd_, TCSANOW, &saved_);
  }

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

// The pty QEMU made for the domain's first serial or console ("pty:/dev/pts/N" in query-chardev).
std::string ConsolePty(qemu::QmpClient& qmp, const std::string& name, const std::string& devname) {
  nlohmann::json all = qmp.Execute("query-chardev", nullptr, std::chrono::seconds(5));
  for (const char* want : {"charserial0", "charconsole0"})
    for (const auto& c : all) {
      const std::string label = c.value("label", ""), file = c.value("filename", "");
      if ((devname.empty() ? label == want : label == devname) && file.rfind("pty:", 0) == 0) return file.substr(4);
    }
  throw std::runtime_error("domain " + name + " has no " + (devname.empty() ? "serial console" : devname) +
                           " on a pty (its XML needs <serial type='pty'> or <console type='pty'>)");
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int Run(const Options& o) {
  StateDir state;
  DomainSession s = OpenDomainSession(state, o.name, Verb::kConsole, std::chrono::seconds(5));
  const std::string pty = ConsolePty(*s.qmp, o.name, o.devname);
  s.qmp.reset();  // leave QMP to the others
  int fd = ::open(pty.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + pty + ": " + std::strerror(errno));
  termios t{};
  if (::tcgetattr(fd, &t) == 0) {  // bytes pass through unchanged
    ::cfmakeraw(&t);
    ::tcsetattr(fd, TCSANOW, &t);
  }
  std::fprintf(stderr, "Connected to domain %s (%s)\r\nEscape character is ^] (Ctrl + ])\r\n", o.name.c_str(), pty.c_str());
  RawTerminal raw(STDIN_FILENO);
  char buf[4096];
  int rc = 0;
  for (;;) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {fd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0 && !(n < 0 && errno == EINTR)) {  // QEMU closed its end: the domain is gone
        std::fprintf(stderr, "\r\nqlaunch: the console of domain %s closed\r\n", o.name.c_str());
        rc = 1;
        break;
      }
      if (n > 0 && !WriteAll(STDOUT_FILENO, buf, static_cast<size_t>(n))) break;
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n <= 0) break;  // end of input
      const char* esc = static_cast<const char*>(std::memchr(buf, kEscape, static_cast<size_t>(n)));
      size_t len = esc ? static_cast<size_t>(esc - buf) : static_cast<size_t>(n);
      if (len && !WriteAll(fd, buf, len)) break;
      if (esc) break;
    }
  }
  ::close(fd);
  std::fprintf(stderr, "\r\n");
  return rc;
}

}  // namespace

void AddConsoleCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "console",
      "Attach this terminal to a running domain's serial console (a <serial type='pty'> or\n"
      "<console type='pty'>), like `virsh console`; Ctrl-] leaves. Exit 1 when the console closes.\n"
      "Example: qlaunch console vm1");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDomain)->required();
  sub->add_option("--devname", o->devname, "the character device (default: charserial0, else charconsole0)");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
