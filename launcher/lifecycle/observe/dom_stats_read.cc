#include "launcher/lifecycle/observe/dom_stats_read.h"

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "domain/memory_totals.h"
#include "domain/parser.h"
#include "launcher/lifecycle/observe/domain_xml.h"
#include "launcher/lifecycle/session/domain_session.h"

namespace qlaunch::launcher {

namespace {

constexpr std::chrono::milliseconds kQmpTimeout{5000};

std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::optional<VcpuTimes> ReadThreadTimes(pid_t pid, long tid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/";
  const auto stat = Slurp(dir + "stat");
  if (!stat) return std::nullopt;
  // After "(comm)": state is field 3, utime 14, stime 15.
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat->substr(close + 2));
  std::string f;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  VcpuTimes t;
  t.time = (utime + stime) * (1000000000ull / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK)));
  // schedstat: "run_ns wait_ns timeslices"; libvirt's delay is the second.
  if (const auto ss = Slurp(dir + "schedstat")) {
    std::istringstream in(*ss);
    uint64_t run = 0, delay = 0;
    if (in >> run >> delay) t.delay = delay;
  }
  // sched: "se.statistics.wait_sum : 12.345678" (ms) where the kernel keeps schedstats.
  if (const auto sched = Slurp(dir + "sched")) {
    std::istringstream in(*sched);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("se.statistics.wait_sum", 0) != 0 && line.rfind("se.wait_sum", 0) != 0 &&
          line.rfind("wait_sum", 0) != 0)
        continue;
      const size_t colon = line.find(':');
      if (colon != std::string::npos)
        t.wait = static_cast<uint64_t>(std::llround(std::stod(line.substr(colon + 1)) * 1e6));
    }
  }
  return t;
}

std::optional<TapCounters> ReadTapCounters(const std::string& tap) {
  const std::string dir = "/sys/class/net/" + tap + "/statistics/";
  TapCounters c;
  for (const auto& [file, field] :
       {std::pair{"rx_bytes", &c.rx_bytes}, {"rx_packets", &c.rx_packets}, {"rx_errors", &c.rx_errors},
        {"rx_dropped", &c.rx_dropped}, {"tx_bytes", &c.tx_bytes}, {"tx_packets", &c.tx_packets},
        {"tx_errors", &c.tx_errors}, {"tx_dropped", &c.tx_dropped}}) {
    const auto v = Slurp(dir + file);
    if (!v) return std::nullopt;
    *field = std::stoull(*v);
  }
  return c;
}

std::optional<uint64_t> ReadRssKib(pid_t pid) {
  const auto stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat ? stat->rfind(')') : std::string::npos;
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat->substr(close + 2));
  std::string f;
  for (int i = 3; i <= 24 && fields >> f; ++i)
    if (i == 24) return std::stoull(f) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
  return std::nullopt;
}

std::vector<StatField> ReadDomStats(const StateDir& state, const std::string& name) {
  // The live XML first: it asks QEMU on its own QMP connection, and QMP serves one at a time.
  const std::string live = LiveDomainXmlOf(state, name, Verb::kDomstats);
  const std::string file = (state.DomainDir(name) / "domain.xml").string();
  const domain::DomainDef def = domain::ParseDomainXml(InactiveDomainXmlOf(state, name), file);
  DomStatsInput in;
  in.memory_kib = domain::TotalMemoryBytes(def) / 1024;
  in.vcpus_max = def.vcpu.count;
  in.disks = StatsDisks(live, file);
  for (const std::string& tap : StatsTaps(live, file))
    in.nics.push_back({tap, tap.empty() ? std::nullopt : ReadTapCounters(tap)});

  DomainSession s = OpenDomainSession(state, name, Verb::kDomstats, kQmpTimeout);
  in.status = s.qmp->Execute("query-status", nullptr, kQmpTimeout);
  try {
    in.balloon = s.qmp->Execute("query-balloon", nullptr, kQmpTimeout);
  } catch (const qemu::QmpTimeout&) {
    throw;
  } catch (const qemu::QmpError&) {
    in.balloon = nullptr;  // "No balloon device has been activated"
  }
  if (const std::string balloon = StatsBalloonAlias(live, file); !balloon.empty() && !in.balloon.is_null()) {
    try {
      in.guest_stats = s.qmp->Execute(
          "qom-get", {{"path", "/machine/peripheral/" + balloon}, {"property", "guest-stats"}}, kQmpTimeout);
    } catch (const qemu::QmpTimeout&) {
      throw;
    } catch (const qemu::QmpError&) {
      in.guest_stats = nullptr;
    }
  }
  in.rss_kib = ReadRssKib(s.qemu.pid);
  in.cpus = s.qmp->Execute("query-cpus-fast", nullptr, kQmpTimeout);
  in.blockstats = s.qmp->Execute("query-blockstats", nullptr, kQmpTimeout);
  in.block = s.qmp->Execute("query-block", nullptr, kQmpTimeout);
  in.vcpus_current = in.cpus.is_array() ? static_cast<unsigned>(in.cpus.size()) : 0;
  if (in.cpus.is_array())
    for (const nlohmann::json& c : in.cpus)
      if (c.contains("thread-id") && c["thread-id"].is_number_integer())
        if (auto t = ReadThreadTimes(s.qemu.pid, c["thread-id"].get<long>())) in.vcpu_times[c["thread-id"]] = *t;
  return DomStats(in);
}

}  // namespace qlaunch::launcher
