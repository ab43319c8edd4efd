// A user entry in a file's POSIX access ACL (system.posix_acl_access): how a running QEMU, whose
// supplementary groups cannot change any more, is given a file that another domain's QEMU owns
// (change-media onto a shared read-only image, file_labels.h). Written as the kernel's xattr
// format directly (no libacl). Where the filesystem keeps no ACLs, Grant fails and the caller's
// check of the open (OpenErrorAs) reports it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace qlaunch::launcher {

// Adds (or replaces) the entry user:UID with read (and write) to the file's access ACL, the
// mask widened to let it through. Returns 0 or the errno.
int GrantUserAcl(const std::string& path, uid_t uid, bool write);

// Drops the user entry of `uid`, or of every uid in [first, last], from the file's access ACL;
// an ACL left with no named entries is removed (the mode alone again).
void RevokeUserAcl(const std::string& path, uint32_t first, uint32_t last);

}  // namespace qlaunch::launcher
