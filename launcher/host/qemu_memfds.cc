#include "launcher/host/qemu_memfds.h"

namespace qlaunch::launcher {

std::map<std::string, std::filesystem::path> QemuMemfds(pid_t pid, const std::string& domain) {
  namespace fs = std::filesystem;
  const std::string prefix = "/memfd:qlaunch:" + domain + ":";
  std::map<std::string, fs::path> by_id;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    std::string target = fs::read_symlink(e.path(), link_ec).string();
    if (target.rfind(prefix, 0) != 0) continue;
    target = target.substr(prefix.size());
    if (const size_t deleted = target.find(" (deleted)"); deleted != std::string::npos) target.resize(deleted);
    by_id.emplace(target, e.path());
  }
  return by_id;
}

}  // namespace qlaunch::launcher
