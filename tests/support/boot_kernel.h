// The Debian kernel the boot tests run their guests on (scripts/setup installs linux-image-amd64).
#pragma once

#include <filesystem>
#include <string>

namespace qlaunch::testing {

// The newest version N with /boot/vmlinuz-N and its modules (/lib/modules/N/modules.dep); ""
// when there is none.
inline std::string NewestKernelVersion() {
  namespace fs = std::filesystem;
  std::string best;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/boot", ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind("vmlinuz-", 0) == 0 && fs::exists("/lib/modules/" + n.substr(8) + "/modules.dep") && n.substr(8) > best)
      best = n.substr(8);
  }
  return best;
}

}  // namespace qlaunch::testing
