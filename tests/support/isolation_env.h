// The fixture of the domain-isolation tests (tests/launch_isolation_*_test.cc; issue 37,
// docs/security.md): domains isolated from each other with no LSM, every domain's QEMU running as
// a uid and gid of its own, leased from a range.
//
// Its attack runs a small program with the credentials and in the namespaces of domain A's QEMU
// (nsenter into them, setpriv to its uid, gid and groups: what guest code that escaped into that
// QEMU has) against domain B's QEMU, eight attacks, and reports each one's errno.
//
// Every test of it points the lease registry and range somewhere private (QLAUNCH_UID_LEASES,
// QLAUNCH_UID_RANGE: other tests and helpers lease from the host's registry meanwhile).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/qlaunch_run.h"

namespace qlaunch::testing {

class LaunchIsolationTest : public LaunchTest {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A root-owned 0600 raw image, and a domain on it whose guest memory is a shared memfd.
  std::string Domain(const std::string& name);
  std::filesystem::path Image(const std::string& name);

  // start --json `flags` `xml` with `env`: QEMU's pid (0, and a failed expectation, when it did
  // not start); its stderr in `err`.
  pid_t Start(const std::string& xml, const std::vector<std::string>& flags = {}, const Env& env = {},
              std::string* err = nullptr);

  // The eight attacks, run as the QEMU of `a` is (its namespaces, uid, gid and groups) against
  // the QEMU of `b` on `b_disk`: each attack's outcome, "reached" or the errno's name.
  std::map<std::string, std::string> Attack(pid_t a, pid_t b, const std::filesystem::path& b_disk);
  static std::string Describe(const std::map<std::string, std::string>& outcome);

  // No file among `paths` (recursively) owned by a uid or group of the lease range.
  void ExpectNothingOwnedByTheRange(const std::vector<std::filesystem::path>& paths);

  std::string range_ = "3700000-3700009";
  std::optional<HugepagePool> pool_;
  uint64_t free_before_ = 0;
};

}  // namespace qlaunch::testing
