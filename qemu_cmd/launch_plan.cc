#include "qemu_cmd/launch_plan.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace qlaunch::qemu {

const char* ToString(BackendType t) {
  switch (t) {
    case BackendType::kRam: return "ram";
    case BackendType::kFile: return "file";
    case BackendType::kMemfd: return "memfd";
  }
  return "?";
}

const char* ToString(PreallocBy p) {
  switch (p) {
    case PreallocBy::kNone: return "none";
    case PreallocBy::kQemu: return "qemu";
    case PreallocBy::kLauncher: return "launcher";
  }
  return "?";
}

const char* ToString(PreallocMode m) {
  switch (m) {
    case PreallocMode::kAuto: return "auto";
    case PreallocMode::kQemu: return "qemu";
    case PreallocMode::kLauncher: return "launcher";
  }
  return "?";
}

const char* QomType(const MemoryBackend& b) {
  if (b.prealloc == PreallocBy::kLauncher) return "memory-backend-file";
  switch (b.type) {
    case BackendType::kRam: return "memory-backend-ram";
    case BackendType::kFile: return "memory-backend-file";
    case BackendType::kMemfd: return "memory-backend-memfd";
  }
  return "?";
}

nlohmann::json ToJson(const DeviceRecord& d) {
  nlohmann::json j = {{"element", d.element}, {"line", d.line}, {"family", d.family}, {"driver", d.driver}, {"id", d.id}};
  nlohmann::json props = nlohmann::json::array();
  for (const auto& [k, v] : d.props) props.push_back({k, v});
  j["props"] = std::move(props);
  if (d.slot)
    j["pci"] = {{"bus", d.slot->bus}, {"slot", d.slot->slot}, {"function", d.slot->function},
                {"multifunction", d.slot->multifunction}};
  return j;
}

DeviceRecord DeviceRecordFromJson(const nlohmann::json& j) {
  try {
    DeviceRecord d;
    d.element = j.at("element").get<std::string>();
    d.line = j.value("line", 0);
    d.family = j.value("family", "");
    d.driver = j.value("driver", "");
    d.id = j.value("id", "");
    for (const auto& p : j.value("props", nlohmann::json::array()))
      d.props.emplace_back(p.at(0).get<std::string>(), p.at(1).get<std::string>());
    if (j.contains("pci")) {
      const auto& pci = j["pci"];
      d.slot = PciSlot{pci.at("bus").get<std::string>(), pci.at("slot").get<unsigned>(),
                       pci.at("function").get<unsigned>(), pci.value("multifunction", false)};
    }
    return d;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a device record of plan.json is not one: ") + e.what());
  }
}

nlohmann::json ToJson(const LaunchPlan& plan) {
  using Json = nlohmann::json;  // keys come out sorted
  Json backends = Json::array();
  for (const MemoryBackend& b : plan.backends) {
    Json j;
    j["id"] = b.id;
    j["size_bytes"] = b.size_bytes;
    j["host_nodes"] = b.host_nodes.Ids();
    j["policy"] = b.policy;
    j["page_size_bytes"] = b.page_size_bytes;
    j["shared"] = b.shared;
    j["prealloc"] = ToString(b.prealloc);
    if (!b.prealloc_reason.empty()) j["prealloc_reason"] = b.prealloc_reason;
    j["thread_context"] = b.thread_context;
    j["prealloc_threads"] = b.prealloc_threads;
    j["type"] = ToString(b.type);
    j["qom_type"] = QomType(b);
    j["mem_path"] = b.mem_path;
    if (b.prealloc == PreallocBy::kLauncher) {
      j["launcher_fd"] = b.launcher_fd;
      j["launcher_threads"] = b.launcher_threads;
    }
    j["prealloc_cpus"] = b.prealloc_cpus.Ids();
    if (b.guest_node) j["guest_node"] = *b.guest_node;
    backends.push_back(std::move(j));
  }
  Json contexts = Json::array();
  for (const ThreadContext& tc : plan.contexts) {
    Json j;
    j["id"] = tc.id;
    j["node_affinity"] = tc.node_affinity.Ids();
    j["cpus"] = tc.cpus.Ids();
    contexts.push_back(std::move(j));
  }
  Json pools = Json::array();
  for (const auto& p : plan.pool_needs) pools.push_back({{"node", p.node}, {"page_bytes", p.page_bytes}, {"pages", p.pages}});
  Json devices = Json::array();
  for (const DeviceRecord& d : plan.devices) devices.push_back(ToJson(d));
  Json memory_devices = Json::array();
  for (const MemoryDeviceArg& m : plan.memory_devices) {
    Json j = {{"driver", m.driver}, {"id", m.id}, {"memdev", m.memdev}, {"node", m.node}};
    if (m.slot) j["slot"] = *m.slot;
    if (m.addr) j["addr"] = *m.addr;
    if (m.block_size) j["block_size"] = m.block_size;
    if (m.requested_size) j["requested_size"] = *m.requested_size;
    memory_devices.push_back(std::move(j));
  }
  Json out;
  out["argv"] = plan.argv;
  out["devices"] = std::move(devices);
  out["memory_devices"] = std::move(memory_devices);
  nlohmann::json before_cont = nlohmann::json::array();
  for (const auto& c : plan.before_cont)
    before_cont.push_back({{"execute", c.execute}, {"arguments", nlohmann::json::parse(c.arguments_json)}});
  out["qmp_before_cont"] = before_cont;
  if (plan.plug_vcpus_to > 0) out["plug_vcpus_to"] = plan.plug_vcpus_to;
  out["backends"] = std::move(backends);
  out["thread_contexts"] = std::move(contexts);
  out["pool_needs"] = std::move(pools);
  return out;
}

}  // namespace qlaunch::qemu
