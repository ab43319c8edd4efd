#include "launcher/host/process_identity.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "launcher/host/uid_lease.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

json ProcessIdentity(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  json out = {{"uid", nullptr}, {"gid", nullptr}, {"leased", false}, {"namespaces", json::array()}};
  std::ifstream in(proc + "/status");
  for (std::string line; std::getline(in, line);) {
    unsigned long real = 0;
    if (line.rfind("Uid:", 0) == 0 && std::istringstream(line.substr(4)) >> real) out["uid"] = real;
    if (line.rfind("Gid:", 0) == 0 && std::istringstream(line.substr(4)) >> real) out["gid"] = real;
  }
  if (out["uid"].is_number()) out["leased"] = IdLeased(out["uid"].get<uint32_t>());
  for (const char* ns : {"mnt", "pid", "ipc", "uts", "net", "user", "cgroup"}) {
    std::error_code a, b;
    const fs::path theirs = fs::read_symlink(proc + "/ns/" + ns, a), ours = fs::read_symlink(std::string("/proc/self/ns/") + ns, b);
    if (!a && !b && theirs != ours) out["namespaces"].push_back(ns);
  }
  return out;
}

}  // namespace qlaunch::launcher
