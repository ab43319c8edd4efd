#include "launcher/host/file_acl.h"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>
#include <vector>

namespace qlaunch::launcher {

namespace {

// linux/posix_acl_xattr.h: a little-endian header (version 2) and entries of tag, perm, id.
constexpr const char* kAccessAcl = "system.posix_acl_access";
constexpr uint32_t kVersion = 2;
constexpr uint16_t kUserObj = 0x01, kUser = 0x02, kGroupObj = 0x04, kGroup = 0x08, kMask = 0x10, kOther = 0x20;
constexpr uint32_t kUndefinedId = 0xffffffffu;

struct Entry {
  uint16_t tag = 0, perm = 0;
  uint32_t id = kUndefinedId;
  bool operator<(const Entry& o) const { return std::tie(tag, id) < std::tie(o.tag, o.id); }
};

// The file's ACL, or the one its mode stands for.
std::vector<Entry> ReadAcl(const std::string& path) {
  std::vector<Entry> out;
  std::vector<char> buf(4096);
  const ssize_t n = ::getxattr(path.c_str(), kAccessAcl, buf.data(), buf.size());
  if (n >= 4) {
    uint32_t version = 0;
    std::memcpy(&version, buf.data(), 4);
    for (ssize_t at = 4; version == kVersion && at + 8 <= n; at += 8) {
      Entry e;
      std::memcpy(&e.tag, buf.data() + at, 2);
      std::memcpy(&e.perm, buf.data() + at + 2, 2);
      std::memcpy(&e.id, buf.data() + at + 4, 4);
      out.push_back(e);
    }
    if (!out.empty()) return out;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return out;
  return {{kUserObj, static_cast<uint16_t>((st.st_mode >> 6) & 7)},
          {kGroupObj, static_cast<uint16_t>((st.st_mode >> 3) & 7)},
          {kOther, static_cast<uint16_t>(st.st_mode & 7)}};
}

// Writes `acl` sorted, the mask the union of the group class (or no mask and no ACL at all when
// only the three base entries are left). The kernel sets the mode's bits from it.
int WriteAcl(const std::string& path, std::vector<Entry> acl) {
  acl.erase(std::remove_if(acl.begin(), acl.end(), [](const Entry& e) { return e.tag == kMask; }), acl.end());
  uint16_t mask = 0;
  bool named = false;
  for (const Entry& e : acl) {
    if (e.tag == kUser || e.tag == kGroup) named = true;
    if (e.tag == kUser || e.tag == kGroup || e.tag == kGroupObj) mask |= e.perm;
  }
  if (!named) {  // the mode alone again, its group bits the owning group's (not the mask's)
    if (::removexattr(path.c_str(), kAccessAcl) != 0 && errno != ENODATA && errno != EOPNOTSUPP) return errno;
    struct stat st {};
    for (const Entry& e : acl)
      if (e.tag == kGroupObj && ::stat(path.c_str(), &st) == 0)
        (void)::chmod(path.c_str(), (st.st_mode & 07707) | (e.perm << 3));
    return 0;
  }
  acl.push_back({kMask, mask});
  std::sort(acl.begin(), acl.end());
  std::vector<char> buf(4 + 8 * acl.size());
  std::memcpy(buf.data(), &kVersion, 4);
  for (size_t i = 0; i < acl.size(); ++i) {
    std::memcpy(buf.data() + 4 + 8 * i, &acl[i].tag, 2);
    std::memcpy(buf.data() + 6 + 8 * i, &acl[i].perm, 2);
    std::memcpy(buf.data() + 8 + 8 * i, &acl[i].id, 4);
  }
  return ::setxattr(path.c_str(), kAccessAcl, buf.data(), buf.size(), 0) == 0 ? 0 : errno;
}

}  // namespace

int GrantUserAcl(const std::string& path, uid_t uid, bool write) {
  std::vector<Entry> acl = ReadAcl(path);
  if (acl.empty()) return errno ? errno : EIO;
  acl.erase(std::remove_if(acl.begin(), acl.end(), [&](const Entry& e) { return e.tag == kUser && e.id == uid; }),
            acl.end());
  acl.push_back({kUser, static_cast<uint16_t>(write ? 6 : 4), static_cast<uint32_t>(uid)});
  return WriteAcl(path, std::move(acl));
}

void RevokeUserAcl(const std::string& path, uint32_t first, uint32_t last) {
  std::vector<Entry> acl = ReadAcl(path);
  const size_t before = acl.size();
  acl.erase(std::remove_if(acl.begin(), acl.end(),
                           [&](const Entry& e) { return e.tag == kUser && e.id >= first && e.id <= last; }),
            acl.end());
  if (acl.size() != before) (void)WriteAcl(path, std::move(acl));
}

}  // namespace qlaunch::launcher
