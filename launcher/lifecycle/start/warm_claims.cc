#include "launcher/lifecycle/start/warm_claims.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "launcher/lifecycle/start/warm_target.h"

namespace qlaunch::launcher {

std::optional<WarmShape> ShapeOf(const qemu::MemoryBackend& b, const numa::HostTopology& host) {
  if (b.prealloc != qemu::PreallocBy::kLauncher || b.page_size_bytes == 0 || b.size_bytes == 0) return std::nullopt;
  if (b.host_nodes.Size() == 1 && b.policy != "interleave")
    return WarmShape{b.page_size_bytes, b.host_nodes.Ids().front(), b.size_bytes};
  // Unbound memory on a host of one node is on that node.
  if (b.host_nodes.Empty() && host.nodes.size() == 1) return WarmShape{b.page_size_bytes, host.nodes.front().id, b.size_bytes};
  return std::nullopt;
}

std::optional<HeldFile> ClaimWarmFile(const qemu::MemoryBackend& b, const numa::HostTopology& host,
                                      std::optional<std::pair<uid_t, gid_t>> owner) {
  const auto shape = ShapeOf(b, host);
  if (!shape) return std::nullopt;
  const auto dirs = PoolDirs(host);
  const auto dir = dirs.find(shape->page_bytes);
  if (dir == dirs.end()) return std::nullopt;
  std::optional<HeldFile> f = PoolDir(dir->second).Claim(shape->node, shape->bytes);
  if (!f) return std::nullopt;
  // QEMU opens /proc/self/fd/N again, as its own user: the file is its for as long as it runs.
  if ((owner && ::fchown(f->fd.get(), owner->first, owner->second) != 0) || ::fchmod(f->fd.get(), 0600) != 0) {
    const std::string error = "cannot give " + f->path.string() + " to QEMU's user: " + std::strerror(errno);
    ::fchown(f->fd.get(), 0, 0);
    PoolDir(dir->second).MarkWarm(&*f);  // nobody opened it: still clean
    throw std::runtime_error(error);
  }
  while (PoolFault("claim-stall")) ::pause();  // claimed, not yet recorded: waits to be killed
  return f;
}

WarmClaims WarmClaims::Take(const qemu::LaunchPlan& plan, const numa::HostTopology& host, const QemuUser& user) {
  WarmClaims c;
  std::optional<std::pair<uid_t, gid_t>> owner;
  if (user.change) owner.emplace(user.uid, user.gid);
  for (const auto& b : plan.backends) {
    std::optional<HeldFile> f = ClaimWarmFile(b, host, owner);
    if (!f) continue;
    c.page_bytes_[b.id] = b.page_size_bytes;
    c.files_.emplace(b.id, std::move(*f));
  }
  return c;
}

WarmClaims::~WarmClaims() {
  if (committed_) {
    // The pool is short of what it took: the detached worker fills its targets up again.
    try {
      if (!files_.empty() && AnyWarmTarget()) StartScrubber(files_.begin()->second.path.parent_path().filename().string());
    } catch (const std::exception&) {
    }
    return;
  }
  for (auto& [id, f] : files_) {  // nobody but us opened it: still clean, back to warm
    ::fchown(f.fd.get(), 0, 0);
    try {
      PoolDir(f.path.parent_path()).MarkWarm(&f);
    } catch (const std::exception&) {
    }
  }
}

HeldFile* WarmClaims::Find(const std::string& id) {
  auto it = files_.find(id);
  return it == files_.end() ? nullptr : &it->second;
}

void WarmClaims::SubtractFromNeeds(std::vector<qemu::LaunchPlan::PoolNeed>* needs) const {
  for (const auto& [id, f] : files_) {
    const uint64_t page = page_bytes_.at(id);
    for (auto& n : *needs)
      if (n.page_bytes == page && (n.node == static_cast<int>(f.name.node) || n.node < 0)) {
        const uint64_t pages = f.name.bytes / page;
        n.pages -= std::min(n.pages, pages);
        break;
      }
  }
  std::erase_if(*needs, [](const qemu::LaunchPlan::PoolNeed& n) { return n.pages == 0; });
}

std::string WarmClaims::Record() const {
  std::string out;
  for (const auto& [id, f] : files_) out += WarmRecordLine(f.path, id);
  return out;
}

std::map<std::string, std::string> WarmClaims::Sources() const {
  std::map<std::string, std::string> out;
  for (const auto& [id, f] : files_) out[id] = "warm";
  return out;
}

}  // namespace qlaunch::launcher
