#include "launcher/lifecycle/change/memory_resize.h"

#include <stdexcept>

#include "launcher/host/pool_lock.h"
#include "launcher/host/pool_reserved.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "launcher/lifecycle/start/inputs.h"
#include "launcher/lifecycle/start/preflight.h"

namespace qlaunch::launcher {

using nlohmann::json;

std::map<std::string, VirtioMemStatus> ReadVirtioMem(const json& devices) {
  std::map<std::string, VirtioMemStatus> out;
  if (!devices.is_array()) return out;
  for (const json& d : devices) {
    if (!d.is_object() || d.value("type", "") != "virtio-mem") continue;
    const json data = d.value("data", json::object());
    if (!data.contains("id") || !data["id"].is_string()) continue;
    VirtioMemStatus s;
    s.requested = data.value("requested-size", uint64_t{0});
    s.plugged = data.value("size", uint64_t{0});
    s.max = data.value("max-size", uint64_t{0});
    out[data["id"].get<std::string>()] = s;
  }
  return out;
}

std::map<std::string, VirtioMemStatus> VirtioMemNow(const std::string& qmp_socket, std::chrono::milliseconds timeout) {
  try {
    auto qmp = qemu::QmpClient::Connect(qmp_socket, timeout);
    qmp->Execute("qmp_capabilities", nullptr, timeout);
    return ReadVirtioMem(qmp->Execute("query-memory-devices", nullptr, timeout));
  } catch (const std::exception&) {
  }
  return {};
}

namespace {

// The hugepages a growth to `requested` takes beyond what the device holds now, as a pool need
// of the device's backend (plan.json): none for ordinary memory.
std::vector<qemu::LaunchPlan::PoolNeed> GrowthNeed(const json& plan, const std::string& memdev, uint64_t holds,
                                                   uint64_t requested) {
  if (requested <= holds) return {};
  for (const json& b : plan.value("backends", json::array())) {
    if (b.value("id", "") != memdev) continue;
    const uint64_t page = b.value("page_size_bytes", uint64_t{0});
    if (page == 0) return {};
    const std::vector<unsigned> nodes = b.value("host_nodes", std::vector<unsigned>{});
    const int node = b.value("policy", "") == "bind" && nodes.size() == 1 ? static_cast<int>(nodes[0]) : -1;
    return {{node, page, (requested - holds + page - 1) / page}};
  }
  return {};
}

}  // namespace

UpdateMemoryResult UpdateMemoryDevice(const StateDir& state, const UpdateMemoryOptions& o) {
  DomainSession s = OpenDomainSession(state, o.name, Verb::kUpdateMemoryDevice, o.qmp_timeout);
  RunningState st = LoadRunningState(state.DomainDir(o.name));
  auto ask = [&] { return ReadVirtioMem(s.qmp->Execute("query-memory-devices", nullptr, o.qmp_timeout)); };

  // First what QEMU runs: a change cut short left the record behind.
  std::map<std::string, VirtioMemStatus> now = ask();
  std::vector<std::string> aliases;  // plan.json's, in document order
  for (const json& m : st.plan.value("memory_devices", json::array()))
    if (m.value("driver", "") == "virtio-mem-pci") aliases.push_back(m.value("id", ""));
  qemu::VirtioMemResize plan = qemu::PlanVirtioMemResize(st.def, o.which, o.requested_bytes, aliases);
  if (auto it = now.find(plan.alias); it != now.end() && it->second.requested != plan.old_requested) {
    CommitMemoryRequested(&st, st.def.devices.memory[plan.index].line, it->second.requested);
    plan = qemu::PlanVirtioMemResize(st.def, o.which, o.requested_bytes, aliases);
  }
  const VirtioMemStatus before = now.count(plan.alias) ? now[plan.alias] : VirtioMemStatus{};

  UpdateMemoryResult r;
  r.alias = plan.alias;
  r.size_bytes = plan.size_bytes;
  r.block_bytes = plan.block_bytes;
  r.old_requested = plan.old_requested;
  r.new_requested = plan.new_requested;
  r.qmp = {{"execute", plan.command.execute}, {"arguments", json::parse(plan.command.arguments.dump())}};

  // Growth on huge pages: the pages the guest will plug must be free now (true count, under the
  // pool lock so that no start takes them between the count and the command).
  const std::vector<qemu::LaunchPlan::PoolNeed> need =
      GrowthNeed(st.plan, plan.memdev, std::max(before.plugged, plan.old_requested), plan.new_requested);
  std::optional<HugepagePoolLock> lock;
  if (!need.empty()) {
    lock.emplace();
    numa::HostTopology host = LoadHost("");
    const std::map<uint64_t, uint64_t> reserved = ReadReservedHugepagesConsistently(&host);
    std::vector<Diagnostic> problems = CheckHugepagePools(need, host, reserved);
    if (!problems.empty())
      throw std::runtime_error("update-memory-device " + o.name + " " + plan.alias + ": " + problems.front().message +
                               "; nothing was changed");
  }
  try {
    s.qmp->Execute(plan.command.execute, r.qmp["arguments"], o.qmp_timeout);
  } catch (const qemu::QmpTimeout&) {
    throw;
  } catch (const qemu::QmpError& e) {
    throw std::runtime_error("update-memory-device " + o.name + " " + plan.alias + ": QEMU refused the new size: " +
                             e.what() + "; nothing was changed");
  }
  now = ask();
  const VirtioMemStatus after = now.count(plan.alias) ? now[plan.alias] : VirtioMemStatus{};
  CommitMemoryRequested(&st, st.def.devices.memory[plan.index].line, after.requested);
  r.plugged_bytes = after.plugged;
  return r;
}

}  // namespace qlaunch::launcher
