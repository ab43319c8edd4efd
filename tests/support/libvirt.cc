#include "support/libvirt.h"

#include <unistd.h>

#include <chrono>

namespace qlaunch::testing {

const std::string& LibvirtUnreachable() {
  static const std::string why = []() -> std::string {
    if (::access(kVirsh, X_OK) != 0) return std::string(kVirsh) + " is missing (scripts/setup installs libvirt-clients)";
    RunResult r = Virsh({"version"});
    if (r.exit_code == 0) return "";
    return "libvirtd does not answer on qemu:///system; start it with scripts/libvirt-up (as root): " + r.Describe();
  }();
  return why;
}

RunResult Virsh(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kVirsh, "-c", kLibvirtUri};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunningProcess(argv, {}).Wait(std::chrono::minutes(1));
}

}  // namespace qlaunch::testing
