#include "launcher/host/uid_lease.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/file_lock.h"
#include "launcher/host/state_dir.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

IdRange LeaseRange() {
  const char* env = std::getenv("QLAUNCH_UID_RANGE");
  const std::string text = env && *env ? env : kDefaultIdRange;
  IdRange r;
  unsigned long long first = 0, last = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%llu-%llu%c", &first, &last, &tail) != 2 || first == 0 || first > last ||
      last >= 0xffffffffull)
    throw std::invalid_argument("QLAUNCH_UID_RANGE=" + text + ": expected FIRST-LAST, 0 < FIRST <= LAST < 4294967295");
  r.first = static_cast<uint32_t>(first);
  r.last = static_cast<uint32_t>(last);
  return r;
}

fs::path LeaseRegistry() {
  const char* env = std::getenv("QLAUNCH_UID_LEASES");
  return env && *env ? fs::path(env) : fs::path(kDefaultLeaseRegistry);
}

bool IsolationOn() {
  const char* env = std::getenv("QLAUNCH_ISOLATION");
  return !(env && std::strcmp(env, "off") == 0);
}

namespace {

// The registry, locked for the lifetime of this object.
class Registry {
 public:
  Registry() : dir_(LeaseRegistry()) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    ::chmod(dir_.c_str(), 0700);
    lock_ = LockExclusive(dir_ / ".lock", LockOn::kFile, "the uid lease registry");
  }
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  fs::path File(uint32_t id) const { return dir_ / std::to_string(id); }

  std::optional<json> Read(uint32_t id) const {
    auto text = ReadSmallFile(File(id));
    if (!text) return std::nullopt;
    json j = json::parse(*text, nullptr, false);
    if (!j.is_object()) return json{{"key", ""}, {"holders", json::array()}};
    return j;
  }
  void Write(uint32_t id, const json& j) const {
    std::error_code ec;
    if (j.value("holders", json::array()).empty()) fs::remove(File(id), ec);
    else AtomicWrite(File(id), j.dump() + "\n");
  }
  std::vector<uint32_t> Ids() const {
    std::vector<uint32_t> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string n = it->path().filename().string();
      if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
      out.push_back(static_cast<uint32_t>(std::stoul(n)));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path dir_;
  UniqueFd lock_;
};

bool NamesId(const fs::path& dir, uint32_t id) {
  auto lease = ReadDomainLease(dir);
  if (!lease) return false;
  if (lease->uid == id) return true;
  return std::find(lease->file_groups.begin(), lease->file_groups.end(), id) != lease->file_groups.end();
}

// A holder lets go once its qlaunch is gone and its domain dir does not name the number (a
// file's shared group: once the file's group is another).
bool Holds(const json& h, uint32_t id) {
  const ProcessRef by{static_cast<pid_t>(h.value("pid", 0)), h.value("start", uint64_t{0})};
  if (by.pid > 0 && ProcessAlive(by)) return true;
  const std::string dir = h.value("dir", "");
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return st.st_gid == id;
  return NamesId(dir, id);
}

json Pruned(json j, uint32_t id) {
  json keep = json::array();
  for (const json& h : j.value("holders", json::array()))
    if (h.is_object() && Holds(h, id)) keep.push_back(h);
  j["holders"] = keep;
  return j;
}

}  // namespace

uint32_t LeaseId(const std::string& key, const fs::path& holder_dir) {
  const IdRange range = LeaseRange();
  Registry reg;
  const ProcessRef me = RefOf(::getpid());
  const json holder = {{"dir", holder_dir.string()}, {"pid", me.pid}, {"start", me.start_time}};
  std::vector<uint32_t> taken;
  for (uint32_t id : reg.Ids()) {
    auto j = reg.Read(id);
    if (!j) continue;
    json pruned = Pruned(*j, id);
    if (pruned["holders"].empty()) {
      reg.Write(id, pruned);  // its holders are gone: free again
      continue;
    }
    if (pruned.value("key", "") == key) {
      bool have = false;
      for (const json& h : pruned["holders"]) have |= h.value("dir", "") == holder_dir.string() && h.value("pid", 0) == me.pid;
      if (!have) pruned["holders"].push_back(holder);
      reg.Write(id, pruned);
      return id;
    }
    if (pruned != *j) reg.Write(id, pruned);
    taken.push_back(id);
  }
  for (uint64_t id = range.first; id <= range.last; ++id) {
    if (std::binary_search(taken.begin(), taken.end(), static_cast<uint32_t>(id))) continue;
    // Checked free at every lease: a user or group made in the range since is never shared.
    if (::getpwuid(static_cast<uid_t>(id)) || ::getgrgid(static_cast<gid_t>(id))) continue;
    reg.Write(static_cast<uint32_t>(id), {{"key", key}, {"holders", json::array({holder})}});
    return static_cast<uint32_t>(id);
  }
  std::string holders;
  for (uint32_t id : taken)
    if (auto j = reg.Read(id)) holders += (holders.empty() ? "" : ", ") + std::to_string(id) + " (" + j->value("key", "") + ")";
  throw std::runtime_error("no free uid in the lease range " + std::to_string(range.first) + "-" +
                           std::to_string(range.last) + " (registry " + LeaseRegistry().string() +
                           "; leased: " + holders + "): destroy a domain or widen QLAUNCH_UID_RANGE");
}

void ReleaseId(uint32_t id, const fs::path& holder_dir) {
  Registry reg;
  auto j = reg.Read(id);
  if (!j) return;
  json keep = json::array();
  const pid_t me = ::getpid();
  for (const json& h : j->value("holders", json::array())) {
    // Another qlaunch still starting a domain of this dir (it leased before it claimed the dir)
    // keeps its hold: only a finished holder's, or this qlaunch's own, goes.
    const ProcessRef by{static_cast<pid_t>(h.value("pid", 0)), h.value("start", uint64_t{0})};
    const bool other_live = by.pid != me && by.pid > 0 && ProcessAlive(by);  // pid 0: settled
    if (h.value("dir", "") != holder_dir.string() || other_live) keep.push_back(h);
  }
  (*j)["holders"] = keep;
  reg.Write(id, *j);
}

void ReleaseIds(const fs::path& holder_dir) {
  if (!fs::exists(LeaseRegistry())) return;
  for (uint32_t id : IdsHeldBy(holder_dir)) ReleaseId(id, holder_dir);
}

void SettleHolds(const fs::path& holder_dir) {
  Registry reg;
  const pid_t me = ::getpid();
  for (uint32_t id : reg.Ids())
    if (auto j = reg.Read(id)) {
      bool changed = false;
      for (json& h : (*j)["holders"])
        if (h.value("dir", "") == holder_dir.string() && h.value("pid", 0) == me) {
          h["pid"] = 0;
          h["start"] = 0;
          changed = true;
        }
      if (changed) reg.Write(id, *j);
    }
}

std::vector<uint32_t> IdsHeldBy(const fs::path& holder_dir) {
  std::vector<uint32_t> out;
  Registry reg;
  for (uint32_t id : reg.Ids())
    if (auto j = reg.Read(id))
      for (const json& h : j->value("holders", json::array()))
        if (h.value("dir", "") == holder_dir.string()) {
          out.push_back(id);
          break;
        }
  return out;
}

namespace {

// Every lease with the holders that let go dropped (a number without holders is free again).
std::vector<std::pair<uint32_t, json>> PrunedLeases(const Registry& reg) {
  std::vector<std::pair<uint32_t, json>> out;
  for (uint32_t id : reg.Ids())
    if (auto j = reg.Read(id)) {
      json pruned = Pruned(*j, id);
      if (pruned != *j) reg.Write(id, pruned);
      if (!pruned["holders"].empty()) out.emplace_back(id, std::move(pruned));
    }
  return out;
}

}  // namespace

void ReapLeases() {
  std::error_code ec;
  if (!fs::exists(LeaseRegistry(), ec)) return;  // nothing leased on this host yet
  try {
    Registry reg;
    (void)PrunedLeases(reg);
  } catch (const std::runtime_error&) {
    // Not this user's registry (an unprivileged qlaunch): root's commands reap it.
  }
}

std::vector<uint32_t> IdsHeldUnder(const fs::path& prefix) {
  std::vector<uint32_t> out;
  Registry reg;
  for (const auto& [id, pruned] : PrunedLeases(reg))
    for (const json& h : pruned["holders"])
      if (h.value("dir", "").rfind(prefix.string(), 0) == 0) {
        out.push_back(id);
        break;
      }
  return out;
}

bool IdLeased(uint32_t id) {
  std::error_code ec;
  return fs::exists(LeaseRegistry() / std::to_string(id), ec);
}

std::optional<DomainLease> ReadDomainLease(const fs::path& domain_dir) {
  auto text = ReadSmallFile(domain_dir / "lease");
  if (!text) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("uid")) return std::nullopt;
  DomainLease l;
  l.uid = j.value("uid", uid_t{0});
  l.gid = j.value("gid", gid_t{0});
  for (const json& g : j.value("file_groups", json::array()))
    if (g.is_number_unsigned()) l.file_groups.push_back(g.get<gid_t>());
  return l;
}

void WriteDomainLease(const fs::path& domain_dir, const DomainLease& lease) {
  AtomicWrite(domain_dir / "lease",
              json{{"uid", lease.uid}, {"gid", lease.gid}, {"file_groups", lease.file_groups}}.dump() + "\n");
}

}  // namespace qlaunch::launcher
