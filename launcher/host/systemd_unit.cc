#include "launcher/host/systemd_unit.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace qlaunch::launcher {

std::string UnitInstance(const std::string& domain_name) {
  std::string out;
  for (size_t i = 0; i < domain_name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(domain_name[i]);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' ||
                       c == '_' || (c == '.' && i > 0);
    if (c == '/') out += '-';
    else if (plain) out += static_cast<char>(c);
    else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string UnitName(const std::string& domain_name) { return "qlaunch@" + UnitInstance(domain_name) + ".service"; }

bool SystemdIsInit() {
  std::error_code ec;
  return std::filesystem::is_directory("/run/systemd/system", ec);
}

std::string InitName() {
  std::ifstream in("/proc/1/comm");
  std::string comm;
  std::getline(in, comm);
  return comm.empty() ? "unknown" : comm;
}

void SetUnitEnabled(const std::string& domain_name, bool on) {
  const std::string unit = UnitName(domain_name);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot run systemctl: fork failed");
  if (pid == 0) {
    ::execlp("systemctl", "systemctl", on ? "enable" : "disable", unit.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(std::string("systemctl ") + (on ? "enable " : "disable ") + unit + " failed (status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) + ")");
}

}  // namespace qlaunch::launcher
