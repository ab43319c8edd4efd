#include "launcher/lifecycle/start/warm_target.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/start_plan.h"
#include "prealloc/error.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;

fs::path PoolTargetsDir() {
  const char* env = std::getenv(kPoolTargetsEnv);
  const fs::path root = env && *env ? fs::path(env) : fs::path("/etc/qlaunch/pool-targets");
  return root / PoolDirName();
}

std::vector<WarmTarget> LoadWarmTargets() {
  std::vector<WarmTarget> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(PoolTargetsDir(), ec)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    WarmTarget t;
    t.domain = j.value("domain", "");
    t.count = j.value("count", 0u);
    t.qemu = j.value("qemu", "");
    t.prealloc = j.value("prealloc", "auto");
    t.xml = j.value("xml", "");
    if (!t.domain.empty() && t.count > 0 && !t.xml.empty()) out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const WarmTarget& a, const WarmTarget& b) { return a.domain < b.domain; });
  return out;
}

bool AnyWarmTarget() { return !LoadWarmTargets().empty(); }

void SaveWarmTarget(const WarmTarget& t) {
  if (t.domain.empty() || t.domain.find('/') != std::string::npos || t.domain[0] == '.')
    throw std::runtime_error("'" + t.domain + "': not a domain name a target file can be named after");
  const fs::path dir = PoolTargetsDir();
  const fs::path file = dir / (t.domain + ".json");
  if (t.count == 0) {
    std::error_code ec;
    fs::remove(file, ec);
    if (fs::is_empty(dir, ec)) fs::remove(dir, ec);
    return;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  const nlohmann::json j{{"domain", t.domain}, {"count", t.count}, {"qemu", t.qemu}, {"prealloc", t.prealloc}, {"xml", t.xml}};
  const std::string text = j.dump(2) + "\n";
  const fs::path tmp = dir / ("." + t.domain + ".json.tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), file.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(ok ? errno : err));
  }
}

std::map<WarmKey, unsigned> CountPoolFiles(const numa::HostTopology& host) {
  std::map<WarmKey, unsigned> out;
  for (const auto& [page, path] : PoolDirs(host))
    for (const WarmEntry& e : PoolDir(path).List())
      if (e.name.state != WarmState::kUse) ++out[{page, e.name.node, e.name.bytes}];
  return out;
}

unsigned SetsIn(const std::vector<ShapedBackend>& set, const std::map<WarmKey, unsigned>& files) {
  std::map<WarmKey, unsigned> per_set;
  for (const auto& b : set) ++per_set[{b.shape.page_bytes, b.shape.node, b.shape.bytes}];
  if (per_set.empty()) return 0;
  unsigned sets = ~0u;
  for (const auto& [key, n] : per_set) {
    auto it = files.find(key);
    sets = std::min(sets, it == files.end() ? 0u : it->second / n);
  }
  return sets;
}

std::vector<ShapedBackend> TargetShapes(const WarmTarget& t, const numa::HostTopology& host) {
  const std::string what = PoolTargetsDir().string() + "/" + t.domain + ".json";
  domain::DomainDef def = LoadDomainText(t.xml, what);
  const std::string emulator = PickEmulator(t.qemu, &def);
  qemu::QemuCaps caps = LoadCaps(emulator);
  const auto mode = ParsePreallocMode(t.prealloc);
  if (!mode) throw std::runtime_error(what + ": prealloc '" + t.prealloc + "': expected auto, qemu or launcher");
  qemu::PlanOptions popts = DefaultPlanOptions(def.name, *mode);
  popts.emulator = emulator;
  return PoolShapes(PlanStart(def, host, caps, &popts), host, what);
}

RefillResult RefillWarmTargets(const numa::HostTopology& host, const std::atomic<bool>* stop) {
  RefillResult r;
  for (const WarmTarget& t : LoadWarmTargets()) {
    if (stop && stop->load()) break;
    try {
      const std::vector<ShapedBackend> set = TargetShapes(t, host);
      const unsigned have = SetsIn(set, CountPoolFiles(host));
      if (have >= t.count) continue;
      PoolFillResult f = FillPool(set, t.count - have, host, stop, {});
      r.sets += f.sets;
      r.bytes += f.bytes;
    } catch (const prealloc::PreallocCancelled&) {
      break;
    } catch (const std::exception& e) {
      r.errors.push_back(t.domain + ": " + e.what());
    }
  }
  return r;
}

}  // namespace qlaunch::launcher
