// The fixture of the QEMU-never-runs-as-root tests (tests/launch_privileges_*_test.cc, docs/security.md):
// on real QEMU 7.2, as root, a domain with a root-owned 0600 disk image runs as ids of its own
// (leased) with no capabilities, opens the image (QMP query-block), and the image is root:root 0600
// again after destroy, after each failed start, and after kill -9 of QEMU followed by `qlaunch
// list`. A read-only image shared by two domains gets a group of its own that both are in, and
// keeps it while either runs. Another user can neither connect to the QMP socket nor read the state
// dir. --user and a DAC <seclabel> choose the user; root only when named.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/launch_env.h"

namespace qlaunch::testing {

class LaunchPrivilegesTest : public LaunchTest {
 protected:
  // Skips unless root and QEMU 7.2; makes <tmp>/images, searchable for QEMU's user.
  void SetUp() override;

  // A root-owned image of `mode` (1 MiB of zeros), in <tmp>/images or `dir`.
  std::filesystem::path Image(const std::string& name, mode_t mode = 0600, const std::filesystem::path& dir = {});
  // A TCG domain of 64 MiB on QEMU 7.2 with `image` as its virtio disk and `extra` after <os>:
  // written to <tmp>/<name>.xml, whose path it returns.
  std::string DiskXml(const std::string& name, const std::filesystem::path& image, bool readonly,
                      const std::string& extra = "");
  // start --json `flags` `xml`: QEMU's pid (0, and a failed expectation, when it did not start).
  pid_t Start(const std::string& xml, const std::vector<std::string>& flags = {});

  // "user:group mode" of `p` (a name, or +N for an id with none; "missing" when there is no `p`).
  static std::string Owner(const std::filesystem::path& p);
  // The owner a file has while the QEMU of `pid` has it: its leased uid and gid ("+N:+N").
  static std::string Leased(pid_t pid);
  // QEMU's own view of its disk: query-block over the domain's QMP socket.
  nlohmann::json QueryBlock(const std::string& name);

  std::filesystem::path images_;
};

}  // namespace qlaunch::testing
