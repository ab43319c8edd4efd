#include "domain/memory_totals.h"

namespace qlaunch::domain {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

uint64_t NumaCellsMemoryBytes(const DomainDef& def) {
  uint64_t sum = 0;
  for (const NumaCell& cell : def.cpu.cells) sum = SaturatingAdd(sum, cell.memory_bytes);
  return sum;
}

uint64_t MemoryDevicesBytes(const DomainDef& def) {
  uint64_t sum = 0;
  for (const MemoryDevice& mem : def.devices.memory) sum = SaturatingAdd(sum, mem.size_bytes);
  return sum;
}

uint64_t InitialMemoryBytes(const DomainDef& def) {
  if (!def.cpu.cells.empty()) return NumaCellsMemoryBytes(def);
  uint64_t devices = MemoryDevicesBytes(def);
  return def.memory_bytes > devices ? def.memory_bytes - devices : 0;
}

uint64_t TotalMemoryBytes(const DomainDef& def) {
  if (def.cpu.cells.empty()) return def.memory_bytes;
  return SaturatingAdd(InitialMemoryBytes(def), MemoryDevicesBytes(def));
}

}  // namespace qlaunch::domain
