// Memory sizes, <memoryBacking> (hugepages and friends) and memory devices (dimm/nvdimm/virtio-mem).
#include <algorithm>
#include <set>

#include "domain/memory_totals.h"
#include "domain/validate_checks.h"

namespace qlaunch::domain {

namespace {

unsigned GuestNodeCount(const DomainDef& def) {
  // A guest without NUMA cells is one implicit node 0 (libvirt accepts nodeset='0' there).
  return def.cpu.cells.empty() ? 1 : static_cast<unsigned>(def.cpu.cells.size());
}

std::set<unsigned> CellIds(const DomainDef& def) {
  std::set<unsigned> ids;
  for (const NumaCell& cell : def.cpu.cells) ids.insert(cell.id);
  return ids;
}

void CheckPageNodes(const DomainDef& def, const HugePage& page, Findings& out) {
  if (!page.guest_nodes) return;
  if (page.guest_nodes->Empty()) {
    out.Error(page.line, "page", "Invalid value of 'nodeset': empty set");
    return;
  }
  for (unsigned node : *page.guest_nodes)
    if (node >= GuestNodeCount(def)) {
      out.Error(page.line, "page", "hugepages: node " + std::to_string(node) + " not found");
      return;  // libvirt names the first missing node only
    }
}

void CheckPagePairs(const std::vector<HugePage>& pages, Findings& out) {
  for (size_t i = 0; i < pages.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const HugePage& a = pages[i];
      const HugePage& b = pages[j];
      if (a.guest_nodes && b.guest_nodes && a.guest_nodes->Intersects(*b.guest_nodes))
        out.Error(a.line, "page",
                  "nodeset attribute of hugepages of sizes " + std::to_string(a.size_bytes / 1024) + " and " +
                      std::to_string(b.size_bytes / 1024) + " intersect");
      else if (!a.guest_nodes && !b.guest_nodes)
        out.Error(a.line, "page",
                  "more than one hugepage size without nodeset (" + KiB(b.size_bytes) + " and " + KiB(a.size_bytes) +
                      "); only one may apply to all guest nodes");
    }
}

void CheckHugepages(const DomainDef& def, Findings& out) {
  const MemoryBacking& mb = def.memory_backing;
  // size_bytes 0 is domain_def.h's "host default size"; the parser refuses an explicit size='0'.
  for (const HugePage& page : mb.pages) CheckPageNodes(def, page, out);
  CheckPagePairs(mb.pages, out);
  if (mb.source == MemSource::kAnonymous)
    out.Error(mb.source_line, "source", "hugepages are not allowed with anonymous memory source");
  if (mb.allocation == AllocMode::kOnDemand)
    out.Error(mb.allocation_line, "allocation", "hugepages are not allowed with memory allocation ondemand");
}

// libvirt 9.0's rules (and words: the differential corpus compares them) for <memory model='virtio-mem'>: a guest node, a block that is a power
// of two and at least the host's THP size (2 MiB on x86) or the source's page size, and a
// requested size of whole blocks within the device.
void CheckVirtioMem(const MemoryDevice& mem, Findings& out) {
  if (!mem.node) out.Error(mem.line, "memory", "target NUMA node needs to be specified for memory device");
  const uint64_t block = mem.block_bytes.value_or(0);
  const uint64_t requested = mem.requested_bytes.value_or(0);
  if (requested > mem.size_bytes)
    out.Error(mem.line, "memory",
              "requested size must be smaller than or equal to @size (" + std::to_string(mem.size_bytes / 1024) + "KiB)");
  if (block == 0 || (block & (block - 1)) != 0) {
    out.Error(mem.line, "memory", "block size must be a power of two");
    return;
  }
  const uint64_t min_block = std::max<uint64_t>(kVirtioMemMinBlockBytes, mem.source_pagesize_bytes.value_or(0));
  if (block < min_block)
    out.Error(mem.line, "memory", "block size too small, must be at least " + std::to_string(min_block / 1024) + "KiB");
  else if (requested % block != 0)
    out.Error(mem.line, "memory", "requested size must be an integer multiple of block size");
}

}  // namespace

void CheckMemoryDevice(const DomainDef& def, const MemoryDevice& mem, Findings& out) {
  if (mem.size_bytes == 0) out.Error(mem.line, "memory", "memory device size must be greater than 0");
  if (mem.node && !def.cpu.cells.empty() && !CellIds(def).contains(*mem.node))
    out.Error(mem.line, "memory",
              "can't add memory backend for guest node '" + std::to_string(*mem.node) + "' as the guest has only '" +
                  std::to_string(def.cpu.cells.size()) + "' NUMA nodes configured");
  if (mem.source_nodemask && mem.source_nodemask->Empty())
    out.Error(mem.line, "memory", "Invalid value of 'nodemask': empty set");
  if (mem.slot && def.max_memory_slots && *mem.slot >= def.max_memory_slots)
    out.Error(mem.line, "memory",
              "memory device slot '" + std::to_string(*mem.slot) + "' exceeds slots count '" +
                  std::to_string(def.max_memory_slots) + "'");
  if (mem.model == "nvdimm") {
    if (mem.source_path.empty()) out.Error(mem.line, "memory", "nvdimm memory device needs <source><path>");
    if (mem.discard) out.Error(mem.line, "memory", "discard is not supported for nvdimms");
  }
  if (mem.model == "virtio-mem") CheckVirtioMem(mem, out);
}

void CheckMemorySizes(const DomainDef& def, Findings& out) {
  uint64_t total = TotalMemoryBytes(def);
  if (total > kMaxMemoryBytes || def.memory_bytes > kMaxMemoryBytes) {
    // Each size is capped by the parser, but their sum is not: refuse it rather than compare
    // or plan with numbers beyond what QEMU (or libvirt) can represent.
    const bool cells = !def.cpu.cells.empty();
    out.Error(def.memory_line ? def.memory_line : def.cpu.numa_line, def.memory_line || !cells ? "memory" : "numa",
              std::string(cells ? "the NUMA cells" : "<memory>") +
                  (def.devices.memory.empty() ? "" : " and memory devices") + " add up to more than " +
                  std::to_string(kMaxMemoryBytes) + " bytes");
    return;
  }
  if (!def.cpu.cells.empty() && def.memory_line != 0) {
    uint64_t cells = NumaCellsMemoryBytes(def);
    uint64_t devices = MemoryDevicesBytes(def);
    if (def.memory_bytes != cells && def.memory_bytes != cells + devices)
      // libvirt silently replaces <memory> by the cells' sum; we refuse the ambiguity
      // (docs/libvirt-differences.md).
      out.Error(def.memory_line, "memory",
                "<memory> is " + KiB(def.memory_bytes) + " but the NUMA cells add up to " + KiB(cells) +
                    (devices ? " (plus " + KiB(devices) + " of memory devices)" : std::string()) + "; set <memory> to " +
                    KiB(cells + devices));
  }
  // Against <memory> as written: a mismatch with the cells is reported above, not twice.
  if (def.current_memory_bytes && *def.current_memory_bytes > def.memory_bytes)
    out.Warning(def.current_memory_line, "currentMemory",
                "currentMemory (" + KiB(*def.current_memory_bytes) + ") is larger than memory (" +
                    KiB(def.memory_bytes) + "); like libvirt, it is capped to memory");
  if (def.max_memory_bytes) {
    if (def.max_memory_slots == 0)
      out.Error(def.max_memory_line, "maxMemory", "both maximum memory size and memory slot count must be specified");
    if (*def.max_memory_bytes < total)
      out.Error(def.max_memory_line, "maxMemory",
                "maximum memory size must be equal or greater than the actual memory size (" +
                    KiB(*def.max_memory_bytes) + " < " + KiB(total) + ")");
    if (def.cpu.cells.empty())
      out.Error(def.max_memory_line, "maxMemory",
                "At least one numa node has to be configured when enabling memory hotplug");
  }
}

void CheckMemoryBacking(const DomainDef& def, Findings& out) {
  const MemoryBacking& mb = def.memory_backing;
  if (mb.hugepages) CheckHugepages(def, out);
  if (mb.threads && *mb.threads == 0)
    out.Error(mb.allocation_line, "allocation", "allocation threads must be at least 1");
}

void CheckMemoryDevices(const DomainDef& def, Findings& out) {
  const std::vector<MemoryDevice>& devices = def.devices.memory;
  if (devices.empty()) return;
  if (!def.max_memory_bytes)
    out.Error(devices.front().line, "memory",
              "cannot use/hotplug a memory device when domain 'maxMemory' is not defined");
  // libvirt 9.0 counts virtio-mem devices here too, though they take no slot.
  if (def.max_memory_slots && devices.size() > def.max_memory_slots)
    out.Error(devices.front().line, "memory",
              "memory device count '" + std::to_string(devices.size()) + "' exceeds slots count '" +
                  std::to_string(def.max_memory_slots) + "'");
  std::set<unsigned> slots;
  for (const MemoryDevice& mem : devices) {
    CheckMemoryDevice(def, mem, out);
    if (mem.slot && !slots.insert(*mem.slot).second)
      out.Error(mem.line, "memory",
                "memory device slot '" + std::to_string(*mem.slot) + "' is already being used by another memory device");
  }
}

}  // namespace qlaunch::domain
