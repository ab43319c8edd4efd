#include "launcher/bench/bench_floor.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace qlaunch::launcher {

domain::DomainDef FloorDomain(domain::DomainDef def) {
  uint64_t page = 2ull << 20;
  for (const domain::HugePage& p : def.memory_backing.pages) page = std::max(page, p.size_bytes);
  def.devices.memory.clear();
  uint64_t total = 0;
  for (domain::NumaCell& cell : def.cpu.cells) {
    cell.memory_bytes = page;
    total += page;
  }
  if (def.cpu.cells.empty()) total = page;
  def.memory_bytes = total;
  if (def.current_memory_bytes) def.current_memory_bytes = total;
  return def;
}

domain::DomainDef SizedFloorDomain(domain::DomainDef def) {
  def.memory_backing.allocation = domain::AllocMode::kOnDemand;
  def.memory_backing.threads.reset();
  return def;
}

std::vector<std::string> WithoutPrealloc(std::vector<std::string> argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i - 1] != "-object" || argv[i].empty() || argv[i][0] != '{') continue;
    nlohmann::json object = nlohmann::json::parse(argv[i], nullptr, /*allow_exceptions=*/false);
    if (!object.is_object() || object.value("qom-type", "").rfind("memory-backend-", 0) != 0) continue;
    object["prealloc"] = false;
    object.erase("prealloc-threads");
    object.erase("prealloc-context");
    argv[i] = object.dump();
  }
  return argv;
}

}  // namespace qlaunch::launcher
