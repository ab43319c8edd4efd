// Giving QEMU's user the files a domain needs, and giving them back: libvirt's DAC driver with
// dynamic_ownership, for qlaunch.
//
// At start (under the state root's lock), each file the guest uses (disk and cdrom images,
// kernel, initrd, NVDIMM backing, serial/console log files) is chowned to QEMU's user (the
// domain's own leased uid by default). Its
// original owner, group and mode are recorded first in <state>/<name>/labels.json, so whoever
// removes the domain's state dir (destroy, a failed start, the next qlaunch command after a
// SIGKILLed qlaunch or QEMU: all of them go through RemoveDomainDir, under the lock) puts them
// back. A file that another domain's labels.json also holds (a shared read-only image) keeps
// its label until the last of them goes; the first recording is the original that is restored.
// The original owner is also kept on the file itself (trusted.qlaunch.owner, with a count of the
// domains that use it in trusted.qlaunch.refs), as libvirt's remember_owner does: a domain on
// another state root or host (a migration's destination, on shared storage) finds the owner to
// give back there, and the source's release after the migration leaves the file to it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "domain/domain_def.h"
#include "launcher/host/qemu_user.h"

namespace qlaunch::launcher {

struct LabelTarget {
  std::string path;
  bool write = false;   // QEMU opens it read-write
  bool create = false;  // a log file QEMU writes: created (empty, 0600) when missing
  Diagnostic where;     // file, line, element: for errors
};

// The files of a domain that QEMU opens by path, in document order.
std::vector<LabelTarget> LabelTargets(const domain::DomainDef& def);

// Chowns each target to `user` (unless the user need not change, or relabel='no'), recording
// originals in <domain_dir>/labels.json, then checks that the user can open it as QEMU will.
// Throws DiagnosticError naming the element when a file is missing, cannot be given to the
// user, or stays unreachable for it (e.g. a parent directory it cannot search). What was
// changed before the error stays recorded: removing the domain dir restores it. Call with the
// state root locked.
//
// A file that a domain with another uid uses already (a read-only image two domains share) keeps
// that domain's uid as owner (owner-readable, so its QEMU can open it again by path) and gets a
// shared group leased for the file (uid_lease.h), group-readable (and writable only if this
// domain writes it), and keeps that group until its last user goes (the owning domain going
// first gives the owner back to the original one); the group is added to `groups` (QEMU's
// supplementary groups) and to <domain_dir>/lease.
void RelabelForQemu(const std::vector<LabelTarget>& targets, const QemuUser& user,
                    const std::filesystem::path& domain_dir, std::vector<gid_t>* groups = nullptr);

// Restores every file recorded in <domain_dir>/labels.json that no other domain dir beside it
// records too, and only while it is still the same file (device and inode). Best effort: a
// file that went away is skipped. Call with the state root locked.
void RestoreLabels(const std::filesystem::path& domain_dir);

// The same for the files among `paths` only, whose records are dropped: what a device detached
// at run time (or an attach undone) gave QEMU. Call with the state root locked.
void RestoreLabelsOf(const std::filesystem::path& domain_dir, const std::vector<std::string>& paths);

// Is the file at `path` (its device and inode) recorded in <domain_dir>/labels.json?
bool LabelRecorded(const std::filesystem::path& domain_dir, const std::string& path);

}  // namespace qlaunch::launcher
