#include "launcher/host/file_labels.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "launcher/host/disk_backing.h"
#include "launcher/host/file_acl.h"
#include "launcher/host/state_dir.h"
#include "launcher/host/uid_lease.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kRecordFile = "labels.json";

struct Record {
  std::string path;
  uint64_t dev = 0, ino = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
};

json ToJson(const Record& r) {
  return {{"path", r.path}, {"dev", r.dev}, {"ino", r.ino}, {"uid", r.uid}, {"gid", r.gid}, {"mode", r.mode}};
}

std::vector<Record> ReadRecords(const fs::path& domain_dir) {
  std::vector<Record> out;
  auto text = ReadSmallFile(domain_dir / kRecordFile);
  if (!text) return out;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_array()) return out;
  for (const json& e : j) {
    if (!e.is_object()) continue;
    Record r;
    r.path = e.value("path", "");
    r.dev = e.value("dev", uint64_t{0});
    r.ino = e.value("ino", uint64_t{0});
    r.uid = e.value("uid", uid_t{0});
    r.gid = e.value("gid", gid_t{0});
    r.mode = e.value("mode", mode_t{0});
    if (!r.path.empty()) out.push_back(r);
  }
  return out;
}

void WriteRecords(const fs::path& domain_dir, const std::vector<Record>& records) {
  json j = json::array();
  for (const Record& r : records) j.push_back(ToJson(r));
  AtomicWrite(domain_dir / kRecordFile, j.dump(2) + "\n");
}

// The record of the same file in another domain dir beside this one, if any.
std::optional<Record> RecordedElsewhere(const fs::path& domain_dir, uint64_t dev, uint64_t ino) {
  std::error_code ec;
  for (fs::directory_iterator it(domain_dir.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == domain_dir.filename()) continue;
    for (const Record& r : ReadRecords(it->path()))
      if (r.dev == dev && r.ino == ino) return r;
  }
  return std::nullopt;
}

// The original owner kept on the file itself (trusted.* attributes, root's), with how many domains
// use it, as libvirt's remember_owner keeps it: a domain on another state root, or another host
// on shared storage (a migration's two ends), then finds the owner to give back, and only the
// last of them gives it back. Where the filesystem keeps no such attributes, the records of the
// state root alone decide (RecordedElsewhere).
constexpr const char* kOwnerAttr = "trusted.qlaunch.owner";  // "UID:GID:MODE" (mode in octal)
constexpr const char* kRefsAttr = "trusted.qlaunch.refs";    // "N"

struct Remembered {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  unsigned refs = 0;
};

std::optional<std::string> GetAttr(const std::string& path, const char* name) {
  char buf[64];
  const ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof buf - 1);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<Remembered> ReadRemembered(const std::string& path) {
  const auto owner = GetAttr(path, kOwnerAttr), refs = GetAttr(path, kRefsAttr);
  if (!owner || !refs) return std::nullopt;
  Remembered m;
  unsigned long uid = 0, gid = 0, mode = 0, n = 0;
  if (std::sscanf(owner->c_str(), "%lu:%lu:%lo", &uid, &gid, &mode) != 3 || std::sscanf(refs->c_str(), "%lu", &n) != 1)
    return std::nullopt;
  m.uid = static_cast<uid_t>(uid);
  m.gid = static_cast<gid_t>(gid);
  m.mode = static_cast<mode_t>(mode);
  m.refs = static_cast<unsigned>(n);
  return m;
}

// False where the filesystem keeps no trusted attributes (the state root's records then decide).
bool WriteRemembered(const std::string& path, const Remembered& m) {
  char owner[64];
  std::snprintf(owner, sizeof owner, "%lu:%lu:%lo", static_cast<unsigned long>(m.uid),
                static_cast<unsigned long>(m.gid), static_cast<unsigned long>(m.mode));
  const std::string refs = std::to_string(m.refs);
  return ::setxattr(path.c_str(), kOwnerAttr, owner, std::strlen(owner), 0) == 0 &&
         ::setxattr(path.c_str(), kRefsAttr, refs.data(), refs.size(), 0) == 0;
}

void Forget(const std::string& path) {
  (void)::removexattr(path.c_str(), kRefsAttr);
  (void)::removexattr(path.c_str(), kOwnerAttr);
}

[[noreturn]] void Fail(const LabelTarget& t, const std::string& message) {
  Diagnostic d = t.where;
  d.message = message;
  throw DiagnosticError(d);
}

std::string Flags(bool write) { return write ? "read-write" : "read-only"; }

// A file that a domain of another uid holds: it keeps its owner (the first domain's uid, whose
// QEMU's groups cannot change while it runs: owner read lets it reopen the file by path), and
// gets a group leased for the file (held by the file for as long as it has that group), group
// read (and write for a writer) for every later domain. Returns the group for QEMU's
// supplementary groups; `join`: this domain's QEMU joins it (not for a running one, whose groups
// are fixed: it gets an ACL entry instead). When the owning domain goes first, the file's
// original owner takes its place (GiveOwnerBack).
gid_t ShareFile(const LabelTarget& t, const std::string& path, const struct stat& st, const Remembered& m,
                const fs::path& domain_dir, bool join) {
  const std::string key = "file:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const gid_t g = static_cast<gid_t>(LeaseId(key, path));
  const mode_t mode = (st.st_gid == g ? st.st_mode & 07777 : (m.mode & 07707) | 0440) | (t.write ? 0020 : 0);
  if (::chown(path.c_str(), st.st_uid, g) != 0 || ::chmod(path.c_str(), mode) != 0) {
    const int err = errno;
    ReleaseId(g, path);
    Fail(t, "cannot give " + t.path + " to a group shared by the domains that use it: " + std::strerror(err));
  }
  SettleHolds(path);  // held by the file's group from now on
  if (!join) return g;
  DomainLease lease = ReadDomainLease(domain_dir).value_or(DomainLease{});
  lease.file_groups.push_back(g);
  WriteDomainLease(domain_dir, lease);
  return g;
}

}  // namespace

std::vector<LabelTarget> LabelTargets(const domain::DomainDef& def) {
  std::vector<LabelTarget> out;
  auto add = [&](const std::string& path, bool write, bool create, int line, const char* element) {
    if (path.empty()) return;
    LabelTarget t;
    t.path = path;
    t.write = write;
    t.create = create;
    t.where.file = def.file;
    t.where.line = line;
    t.where.element = element;
    out.push_back(std::move(t));
  };
  add(def.os.kernel, false, false, def.os.line, "kernel");
  add(def.os.initrd, false, false, def.os.line, "initrd");
  for (const auto& d : def.devices.disks) {
    add(d.source, !(d.readonly || d.device == "cdrom"), false, d.line, "disk");
    // QEMU opens a qcow2's backing files itself, read-only (qlaunch names no backing nodes).
    if (d.driver_type == "qcow2" && !d.source.empty())
      for (const std::string& backing : QcowBackingChain(d.source)) add(backing, false, false, d.line, "disk");
  }
  for (const auto& m : def.devices.memory) add(m.source_path, true, false, m.line, "memory");
  for (const auto& c : def.devices.chardevs)
    if (c.type == "file") add(c.path, true, true, c.line, c.kind == "console" ? "console" : "serial");
  return out;
}

void RelabelForQemu(const std::vector<LabelTarget>& targets, const QemuUser& user, const fs::path& domain_dir,
                    std::vector<gid_t>* groups) {
  std::vector<Record> records = ReadRecords(domain_dir);
  const bool chown_them = user.change && user.relabel;
  for (const LabelTarget& t : targets) {
    struct stat st {};
    if (::stat(t.path.c_str(), &st) != 0 && errno == ENOENT && t.create) {
      int fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0) Fail(t, "cannot create " + t.path + ": " + std::strerror(errno));
      ::close(fd);
    }
    if (::stat(t.path.c_str(), &st) != 0) Fail(t, t.path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
      Fail(t, t.path + " is neither a file nor a block device");
    if (chown_them) {
      std::error_code ec;
      fs::path real = fs::canonical(t.path, ec);  // chown follows symlinks; record the file itself
      Record r{ec ? t.path : real.string(), static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
               st.st_uid, st.st_gid, static_cast<mode_t>(st.st_mode & 07777)};
      bool mine = false, granted = false;
      for (const Record& have : records) mine |= have.dev == r.dev && have.ino == r.ino;
      if (!mine) {
        // Shared with a running domain (on this state root, another, or another host): the owner
        // to give back is the one it recorded, not the current one (already QEMU's user).
        std::optional<Remembered> m = ReadRemembered(r.path);
        if (m) {
          r.uid = m->uid, r.gid = m->gid, r.mode = m->mode;
          ++m->refs;
          WriteRemembered(r.path, *m);
        } else if (const std::optional<Record> other = RecordedElsewhere(domain_dir, r.dev, r.ino)) {
          r = *other;  // recorded before the file kept its owner: the records decide
        } else {
          WriteRemembered(r.path, {r.uid, r.gid, r.mode, 1});
        }
        records.push_back(r);
        WriteRecords(domain_dir, records);  // before the chown: a SIGKILL now still restores
        // Held by another uid (a domain of its own ids; not the other end of this domain's migration).
        if (m && st.st_uid != user.uid && user.lease) {
          const gid_t g = ShareFile(t, r.path, st, *m, domain_dir, groups != nullptr);
          if (groups) {
            groups->push_back(g);
          } else {  // a running QEMU (change-media, attach): its groups are fixed, an ACL entry lets it in
            if (int err = GrantUserAcl(r.path, user.uid, t.write))
              Fail(t, "cannot give " + t.path + ", which another domain uses, to the running QEMU's user " +
                          user.user + " (ACL: " + std::strerror(err) + ")");
            granted = true;
          }
        }
      }
      struct stat now {};
      const bool shared = groups && ::stat(t.path.c_str(), &now) == 0 &&
                          std::find(groups->begin(), groups->end(), now.st_gid) != groups->end() && now.st_gid != user.gid;
      if (!shared && !granted && (st.st_uid != user.uid || st.st_gid != user.gid) && ::chown(t.path.c_str(), user.uid, user.gid) != 0) {
        int err = errno;
        // A read-only filesystem or one that refuses chown is fine if QEMU can open it anyway.
        if (OpenErrorAs(user, t.path, t.write ? O_RDWR : O_RDONLY) != 0)
          Fail(t, "cannot give " + t.path + " to the QEMU user " + user.user + " (chown: " + std::strerror(err) +
                      "), and it cannot open it " + Flags(t.write) + " as it is");
      }
    }
    if (int err = OpenErrorAs(user, t.path, t.write ? O_RDWR : O_RDONLY))
      Fail(t, "the QEMU user " + user.user + " cannot open " + t.path + " " + Flags(t.write) + " (" +
                  std::strerror(err) + ")" +
                  (err == EACCES ? ": a directory on its path may not be searchable for it, or relabel='no' kept "
                                   "an owner it cannot use"
                                 : ""));
  }
}

namespace {

// The domain in `domain_dir` goes while others still use the file. An ACL entry its running QEMU
// was given goes. A shared file (its group leased for it) still owned by its uid gets its
// original owner in the uid's place (the group keeps the others' access), unless another domain
// of that same uid on this state root uses it too (the other end of a migration on this host).
void GiveOwnerBack(const fs::path& domain_dir, const Record& r, const struct stat& st) {
  const std::optional<DomainLease> lease = ReadDomainLease(domain_dir);
  if (lease) RevokeUserAcl(r.path, lease->uid, lease->uid);
  if (!lease || st.st_uid != lease->uid || st.st_uid == r.uid || st.st_gid == lease->gid || !IdLeased(st.st_gid))
    return;
  std::error_code ec;
  for (fs::directory_iterator it(domain_dir.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == domain_dir.filename()) continue;
    const std::optional<DomainLease> other = ReadDomainLease(it->path());
    if (!other || other->uid != lease->uid) continue;
    for (const Record& o : ReadRecords(it->path()))
      if (o.dev == r.dev && o.ino == r.ino) return;
  }
  (void)!::chown(r.path.c_str(), r.uid, static_cast<gid_t>(-1));
}

// Gives the file of `r` its recorded owner and mode back, unless another domain still uses it
// (then only the owner, if it was this domain's uid: GiveOwnerBack) or the path is another file now.
void Restore(const fs::path& domain_dir, const Record& r) {
  struct stat st {};
  if (::stat(r.path.c_str(), &st) != 0) return;
  if (static_cast<uint64_t>(st.st_dev) != r.dev || static_cast<uint64_t>(st.st_ino) != r.ino) return;
  if (auto m = ReadRemembered(r.path)) {
    if (m->refs > 1) {  // another domain, here or elsewhere, still uses it
      --m->refs;
      WriteRemembered(r.path, *m);
      GiveOwnerBack(domain_dir, r, st);
      return;
    }
    Forget(r.path);
  } else if (RecordedElsewhere(domain_dir, r.dev, r.ino)) {
    GiveOwnerBack(domain_dir, r, st);
    return;  // another domain on this state root still uses it
  }
  (void)!::chown(r.path.c_str(), r.uid, r.gid);
  try {  // the ACL entries of running QEMUs given the file (change-media onto a shared image)
    const IdRange range = LeaseRange();
    RevokeUserAcl(r.path, range.first, range.last);
  } catch (const std::invalid_argument&) {
  }
  (void)!::chmod(r.path.c_str(), r.mode);
  // The last user of a file shared by domains of their own ids: its shared group is free again.
  if (st.st_gid != r.gid && IdLeased(st.st_gid)) ReleaseId(st.st_gid, r.path);
}

}  // namespace

void RestoreLabels(const fs::path& domain_dir) {
  for (const Record& r : ReadRecords(domain_dir)) Restore(domain_dir, r);
  std::error_code ec;
  fs::remove(domain_dir / kRecordFile, ec);
}

void RestoreLabelsOf(const fs::path& domain_dir, const std::vector<std::string>& paths) {
  std::vector<Record> keep, give_back;
  for (const Record& r : ReadRecords(domain_dir)) {
    bool named = false;
    for (const std::string& p : paths) {
      struct stat st {};
      named |= ::stat(p.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_dev) == r.dev &&
               static_cast<uint64_t>(st.st_ino) == r.ino;
    }
    (named ? give_back : keep).push_back(r);
  }
  if (give_back.empty()) return;
  // Restored first: after a SIGKILL here, removing the domain dir restores them again (the same owner).
  for (const Record& r : give_back) Restore(domain_dir, r);
  WriteRecords(domain_dir, keep);
}

bool LabelRecorded(const fs::path& domain_dir, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  for (const Record& r : ReadRecords(domain_dir))
    if (r.dev == static_cast<uint64_t>(st.st_dev) && r.ino == static_cast<uint64_t>(st.st_ino)) return true;
  return false;
}

}  // namespace qlaunch::launcher
