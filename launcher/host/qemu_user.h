// Who QEMU runs as. libvirt runs it as an unprivileged user with no capabilities (its DAC
// driver); so does qlaunch: by default a uid and gid of the domain's own, leased for as long as
// it runs (uid_lease.h; group kvm too; `qlaunch-qemu` with QLAUNCH_ISOLATION=off), `start --user USER[:GROUP]`,
// or the domain's <seclabel type='static' model='dac'><label>USER:GROUP</label>. Root only when
// asked for by name, with a warning. When qlaunch itself is not root, QEMU runs as qlaunch's
// own user (there is nothing to drop) and naming another user is an error.
#pragma once

#include <sys/types.h>

#include <optional>
#include <filesystem>
#include <string>
#include <vector>

#include "domain/domain_def.h"

namespace qlaunch::launcher {

inline constexpr const char* kDefaultQemuUser = "qlaunch-qemu";

struct QemuUser {
  std::string user, group;    // names (or "+UID") for messages and the state dir
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (kvm for /dev/kvm)
  bool change = false;        // the child switches to it (qlaunch is root and it is not root)
  std::string source;         // "--user", "<seclabel> at FILE:LINE", "default"
  bool relabel = true;        // <seclabel relabel='no'>: leave file owners alone
  bool lease = false;         // the default: ids of the domain's own, leased by LeaseQemuUser
};

// Throws DiagnosticError (naming --user or the <seclabel> line) when the user or group does
// not exist, or when a non-root qlaunch is asked to run QEMU as someone else. Prints the
// warning for an explicit root.
QemuUser ResolveQemuUser(const std::string& user_flag, const domain::DomainDef& def);

// What opening `path` with `flags` (O_RDONLY, O_RDWR, ...) does for `user`: 0, or the errno.
// Runs the open in a child process that has switched to the user, so permissions, ACLs,
// search bits of every parent directory and read-only mounts all count exactly as for QEMU.
// The child shares qlaunch's memory while the caller waits (no page tables copied: about 0.1 ms
// where a fork took 0.4 ms of every start); qlaunch's own credentials and dumpable flag stay.
// The default user of a root qlaunch (QemuUser::lease): a uid and gid leased for the domain
// (its name and UUID) and held by `domain_dir`, groups the gid and kvm. Throws
// std::runtime_error when the range has none free. Does nothing for a user named.
void LeaseQemuUser(QemuUser* user, const domain::DomainDef& def, const std::filesystem::path& domain_dir);

// Who the running domain of `domain_dir` runs as: its start's record (<dir>/user, USER:GROUP,
// and <dir>/lease: the leased ids, kvm and the file groups it was given).
QemuUser RecordedQemuUser(const std::filesystem::path& domain_dir, const domain::DomainDef& def);

int OpenErrorAs(const QemuUser& user, const std::string& path, int flags);

}  // namespace qlaunch::launcher
