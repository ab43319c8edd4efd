#include "qemu_cmd/vcpu_hotplug_plan.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace qlaunch::qemu {

using nlohmann::json;

namespace {

long long Id(const json& props, const char* key) {
  return props.contains(key) && props[key].is_number_integer() ? props[key].get<long long>() : -1;
}

}  // namespace

std::vector<HotpluggableCpu> ParseHotpluggableCpus(const json& reply) {
  if (!reply.is_array()) throw std::runtime_error("query-hotpluggable-cpus: not a list: " + reply.dump());
  std::vector<HotpluggableCpu> out;
  for (const json& e : reply) {
    if (!e.is_object() || !e.contains("type") || !e["type"].is_string() || !e.contains("props") ||
        !e["props"].is_object())
      throw std::runtime_error("query-hotpluggable-cpus: an entry without type or props: " + e.dump());
    if (e.value("vcpus-count", 1) != 1)
      throw std::runtime_error("query-hotpluggable-cpus: an entry of " + std::to_string(e.value("vcpus-count", 1)) +
                               " vCPUs; qlaunch plugs one vCPU per entry");
    out.push_back({e["type"].get<std::string>(), e["props"], e.value("qom-path", "")});
  }
  auto key = [](const HotpluggableCpu& c) {
    return std::make_tuple(Id(c.props, "socket-id"), Id(c.props, "die-id"), Id(c.props, "cluster-id"),
                           Id(c.props, "core-id"), Id(c.props, "thread-id"));
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  return out;
}

unsigned PluggedCount(const std::vector<HotpluggableCpu>& cpus) {
  return static_cast<unsigned>(std::count_if(cpus.begin(), cpus.end(), [](const auto& c) { return c.plugged(); }));
}

VcpuChange PlanSetVcpus(const std::vector<HotpluggableCpu>& cpus, unsigned boot, unsigned want) {
  const unsigned max = static_cast<unsigned>(cpus.size());
  if (want == 0) throw std::runtime_error("Invalid number of vCPUs: 0 (a domain needs at least one)");
  if (want > max)
    throw std::runtime_error("requested vcpus is greater than max allowable vcpus for the live domain: " +
                             std::to_string(want) + " > " + std::to_string(max));
  const unsigned now = PluggedCount(cpus);
  for (unsigned i = 0; i < max; ++i)
    if (cpus[i].plugged() != (i < now))
      throw std::runtime_error("vCPU " + std::to_string(i) + " is " + (cpus[i].plugged() ? "plugged" : "not plugged") +
                               " while " + std::to_string(now) +
                               " are: the plugged vCPUs are not the first ones, which qlaunch does not change");
  VcpuChange c;
  for (unsigned i = now; i < want; ++i) {
    QmpCommand add{"device_add", nlohmann::ordered_json::object()};
    add.arguments["driver"] = cpus[i].type;
    add.arguments["id"] = "vcpu" + std::to_string(i);
    for (const char* k : {"socket-id", "core-id", "thread-id", "node-id", "die-id", "cluster-id"})
      if (Id(cpus[i].props, k) >= 0) add.arguments[k] = Id(cpus[i].props, k);
    c.add.push_back(std::move(add));
  }
  for (unsigned i = now; i > want; --i) {
    if (i - 1 < boot)
      throw std::runtime_error("vcpu '" + std::to_string(i - 1) + "' can't be hot-unplugged: the domain started with " +
                               std::to_string(boot) + " vCPUs (<vcpu current>), and those stay");
    c.remove.push_back("vcpu" + std::to_string(i - 1));
  }
  return c;
}

}  // namespace qlaunch::qemu
