// Ids leased to domains, as systemd's DynamicUser leases them: every running domain's QEMU gets a
// uid and gid of its own, so that a guest escaping into one QEMU reaches nothing of another
// (docs/security.md). A number is taken from a range (default kDefaultIdRange, checked free
// against the passwd and group databases at every lease) and is the domain's uid and gid both.
// The same number also serves as the shared group of a file that two domains use at once
// (file_labels.h): a gid only, keyed by the file.
//
// The registry is host-wide ($QLAUNCH_UID_LEASES, default /run/qlaunch-uids), not per state root:
// two state roots on one host (a migration's two ends) must never hand out one uid to two
// domains. One file per leased number (<registry>/<N>, JSON: its key and its holders), changed
// only under an exclusive flock on <registry>/.lock. A key names what holds the number: a domain
// ("domain:NAME:UUID": the two ends of a migration on one host, the same domain, share its uid)
// or a file ("file:DEV:INO"). A holder is a domain directory plus the qlaunch that leased for it;
// it holds while that qlaunch is alive or while <dir>/lease still names the number, so a holder
// whose start was SIGKILLed before or after its domain dir was made lets go at the next lease, and
// removing a domain dir (RemoveDomainDir: destroy, a failed start, the next command after a
// SIGKILL) releases what it held at once. A file's shared group is held by the file itself: for
// as long as the file has that group (the last domain using it gives the file its owner back).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace qlaunch::launcher {

inline constexpr const char* kDefaultIdRange = "2100000000-2100009999";
inline constexpr const char* kDefaultLeaseRegistry = "/run/qlaunch-uids";

struct IdRange {
  uint32_t first = 0, last = 0;
};

// $QLAUNCH_UID_RANGE (FIRST-LAST) or the default; throws std::invalid_argument for a bad one.
IdRange LeaseRange();
// $QLAUNCH_UID_LEASES or the default.
std::filesystem::path LeaseRegistry();
// False when $QLAUNCH_ISOLATION is "off": every domain's QEMU then runs as qlaunch-qemu, as
// before qlaunch leased ids (for comparison: tests and scripts/bench).
bool IsolationOn();

// Takes the number that `key` holds already (adding `holder_dir` as a holder), or the lowest
// free one in the range. Throws std::runtime_error naming the range and its holders when none is
// free.
uint32_t LeaseId(const std::string& key, const std::filesystem::path& holder_dir);

// The leases of `holder_dir` taken by this qlaunch are held by the dir alone from now on (its
// <dir>/lease names them): called once that file is written, so that a qlaunch that outlives
// the domain (`run`) holds nothing.
void SettleHolds(const std::filesystem::path& holder_dir);

// Drops `holder_dir` from every lease it holds (but not a hold of another qlaunch that is still
// alive: a start of the same name that leased and has yet to claim the dir); a number without
// holders is free again.
void ReleaseIds(const std::filesystem::path& holder_dir);
// The same for the lease of `id` only.
void ReleaseId(uint32_t id, const std::filesystem::path& holder_dir);

// The numbers `holder_dir` holds in the registry, and whether `id` is a leased number (a domain's
// or a file's) at all.
std::vector<uint32_t> IdsHeldBy(const std::filesystem::path& holder_dir);
bool IdLeased(uint32_t id);
// Lets go of every holder that no longer holds (its qlaunch gone and its domain dir not naming
// the number, e.g. a start SIGKILLed before it made its domain dir): run by every command that
// looks at domains (list, and any verb on a named domain), not only by the next lease.
void ReapLeases();
// The numbers still held (holders gone are let go first) by a holder whose path begins with
// `prefix` (a state root, a test's directory).
std::vector<uint32_t> IdsHeldUnder(const std::filesystem::path& prefix);

// What a domain dir records of its lease (<dir>/lease): its uid and gid, and the file groups its
// QEMU is in. nullopt when it has none (an explicit user, isolation off).
struct DomainLease {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> file_groups;
};
std::optional<DomainLease> ReadDomainLease(const std::filesystem::path& domain_dir);
void WriteDomainLease(const std::filesystem::path& domain_dir, const DomainLease& lease);

}  // namespace qlaunch::launcher
