#include "qemu_cmd/memory_plan.h"

#include "qemu_cmd/plan_diagnostic.h"

#include <algorithm>
#include <map>
#include <string>

namespace qlaunch::qemu {

using domain::DomainDef;
using domain::MemAccess;
using domain::NumaMode;
using numa::HostTopology;

uint64_t AlignUp(uint64_t value, uint64_t align) { return (value + align - 1) / align * align; }

namespace {

std::string KiB(uint64_t bytes) { return std::to_string(bytes / kKiB) + " KiB"; }

// The huge page size a backend serving guest node `cell` uses, and the element that asked
// for it (for error messages). size 0: no huge pages.
struct PageChoice {
  uint64_t size = 0;
  int line = 0;
  const char* element = "hugepages";
};

PageChoice ResolvePageSize(const DomainDef& def, const HostTopology& host, PageChoice choice) {
  if (choice.size == 0) {  // "the host's default"
    if (host.default_hugepage_bytes == 0)
      throw DiagnosticError(PlanError(def, choice.line, choice.element,
                                  "the host's default huge page size is unknown; give the page size explicitly"));
    choice.size = host.default_hugepage_bytes;
  }
  if (choice.size == kBasePageBytes) choice.size = 0;  // ordinary pages: no hugetlb
  return choice;
}

PageChoice CellPageSize(const DomainDef& def, const HostTopology& host, unsigned cell) {
  const domain::MemoryBacking& mb = def.memory_backing;
  if (!mb.hugepages) return {};
  if (mb.pages.empty()) return ResolvePageSize(def, host, {0, mb.hugepages_line, "hugepages"});
  const domain::HugePage* generic = nullptr;
  for (const domain::HugePage& p : mb.pages) {
    if (!p.guest_nodes) {
      if (generic == nullptr) generic = &p;
    } else if (p.guest_nodes->Contains(cell)) {
      return ResolvePageSize(def, host, {p.size_bytes, p.line, "page"});
    }
  }
  if (generic != nullptr) return ResolvePageSize(def, host, {generic->size_bytes, generic->line, "page"});
  return {};
}

const char* PolicyName(NumaMode mode) {
  switch (mode) {
    case NumaMode::kStrict: return "bind";
    case NumaMode::kPreferred: return "preferred";
    case NumaMode::kInterleave: return "interleave";
    case NumaMode::kRestrictive: return "";
  }
  return "";
}

// <memoryBacking><discard/>: discard for every backend that says nothing itself; its absence
// says nothing (the backend keeps QEMU's default, unrendered).
std::optional<bool> BackingDiscard(const domain::MemoryBacking& mb) {
  return mb.discard ? std::optional<bool>(true) : std::nullopt;
}

struct Binding {
  IdSet nodes;
  std::string policy;
};

class Planner {
 public:
  Planner(const DomainDef& def, const HostTopology& host, const QemuCaps& caps, const PlanOptions& opts)
      : def_(def), host_(host), caps_(caps), opts_(opts) {}

  MemoryLayout Run();

 private:
  const domain::NumaCell* Cell(unsigned id) const {
    for (const auto& c : def_.cpu.cells)
      if (c.id == id) return &c;
    return nullptr;
  }
  void CheckHostNodes(const IdSet& nodes, int line, const char* element) const;
  Binding NumatuneBinding(std::optional<unsigned> cell);
  void Fill(MemoryBackend& b, PageChoice page, MemAccess access, std::optional<bool> discard,
            const std::string& nvdimm_path);
  // One <memory> device: its backend and -device, named by `name` (a DIMM's slot, a
  // virtio-mem device's rank).
  void PlanDevice(const domain::MemoryDevice& m, unsigned name);

  const DomainDef& def_;
  const HostTopology& host_;
  const QemuCaps& caps_;
  const PlanOptions& opts_;
  MemoryLayout out_;
  bool noted_auto_ = false, noted_restrictive_ = false;
};

void Planner::CheckHostNodes(const IdSet& nodes, int line, const char* element) const {
  for (unsigned n : nodes)
    if (host_.Node(n) == nullptr)
      throw DiagnosticError(PlanError(def_, line, element, "NUMA node " + std::to_string(n) + " is unavailable"));
}

Binding Planner::NumatuneBinding(std::optional<unsigned> cell) {
  const domain::NumaTune& nt = def_.numatune;
  if (!nt.present) return {};
  NumaMode mode = NumaMode::kStrict;
  IdSet nodes;
  int line = 0;
  const char* element = "memory";
  const domain::MemNode* memnode = nullptr;
  if (cell && !def_.cpu.cells.empty())
    for (const auto& m : nt.memnodes)
      if (m.cellid == *cell) memnode = &m;
  if (memnode != nullptr) {
    mode = memnode->mode;
    nodes = memnode->nodeset;
    line = memnode->line;
    element = "memnode";
  } else {
    mode = nt.mode.value_or(NumaMode::kStrict);
    line = nt.memory_line ? nt.memory_line : nt.line;
    if (nt.placement == domain::Placement::kAuto) {
      nodes = host_.CpuNodeIds();
      if (!noted_auto_) {
        noted_auto_ = true;
        out_.notes.push_back(PlanWarning(def_, line, "memory",
                                  "placement='auto' needs numad, which qlaunch does not use; binding memory to "
                                  "the host nodes with CPUs (" + nodes.ToString() + ")"));
      }
    } else if (nt.nodeset) {
      nodes = *nt.nodeset;
    }
  }
  if (mode == NumaMode::kRestrictive) {
    if (!noted_restrictive_) {
      noted_restrictive_ = true;
      out_.notes.push_back(PlanWarning(def_, line, element,
                                "mode='restrictive' is enforced by libvirt through cgroups, which qlaunch does not "
                                "manage; the memory is left without a host binding"));
    }
    return {};
  }
  if (nodes.Empty()) return {};
  CheckHostNodes(nodes, line, element);
  return {nodes, PolicyName(mode)};
}

void Planner::Fill(MemoryBackend& b, PageChoice page, MemAccess access, std::optional<bool> discard,
                   const std::string& nvdimm_path) {
  const domain::MemoryBacking& mb = def_.memory_backing;
  bool prealloc = mb.allocation == domain::AllocMode::kImmediate;
  if (!nvdimm_path.empty()) {
    // libvirt: an NVDIMM is always a file backend on its path, preallocated, never hugetlb.
    b.type = BackendType::kFile;
    b.mem_path = nvdimm_path;
    prealloc = true;
  } else if (mb.source == domain::MemSource::kMemfd) {
    if (!caps_.memfd)
      throw DiagnosticError(PlanError(def_, mb.source_line, "source",
                                  "this QEMU has no memory-backend-memfd (source type='memfd')"));
    b.type = BackendType::kMemfd;
    if (page.size) {
      if (!caps_.memfd_hugetlb)
        throw DiagnosticError(PlanError(def_, page.line, page.element, "this QEMU cannot back a memfd with huge pages"));
      if (!host_.hugepage_sizes.empty() &&
          std::find(host_.hugepage_sizes.begin(), host_.hugepage_sizes.end(), page.size) == host_.hugepage_sizes.end())
        throw DiagnosticError(PlanError(def_, page.line, page.element,
                                    "the host has no huge pages of " + KiB(page.size)));
      b.page_size_bytes = page.size;
      prealloc = true;
    }
  } else if (page.size) {
    auto it = host_.hugetlbfs_mounts.find(page.size);
    if (it == host_.hugetlbfs_mounts.end())
      throw DiagnosticError(PlanError(def_, page.line, page.element,
                                  "Unable to find any usable hugetlbfs mount for " + KiB(page.size)));
    b.type = BackendType::kFile;
    b.page_size_bytes = page.size;
    b.mem_path = it->second + "/qlaunch/" + def_.name;
    prealloc = true;
  } else if (access != MemAccess::kDefault || mb.source == domain::MemSource::kFile) {
    b.type = BackendType::kFile;
    b.mem_path = !opts_.memory_backing_dir.empty() ? opts_.memory_backing_dir : "/run/qlaunch/" + def_.name + "/ram";
  } else {
    b.type = BackendType::kRam;
  }
  b.prealloc = prealloc ? PreallocBy::kQemu : PreallocBy::kNone;
  // QEMU's defaults: memfd is shared, file and ram are private. "share" is only spelled out
  // when the domain asks for an access mode (as libvirt does).
  b.shared = access == MemAccess::kShared || (access == MemAccess::kDefault && b.type == BackendType::kMemfd);
  if (access != MemAccess::kDefault && b.type != BackendType::kRam) b.share_explicit = access == MemAccess::kShared;
  // discard-data as the domain says it, yes or no (libvirt renders an explicit discard='no' as false).
  if (b.type == BackendType::kFile && nvdimm_path.empty()) b.discard = discard;
}

MemoryLayout Planner::Run() {
  const domain::MemoryBacking& mb = def_.memory_backing;

  // Sizes first, as libvirt aligns them.
  uint64_t device_bytes = 0;
  for (const auto& m : def_.devices.memory) device_bytes += m.size_bytes;
  std::vector<const domain::NumaCell*> cells;
  for (const auto& c : def_.cpu.cells) cells.push_back(&c);
  std::sort(cells.begin(), cells.end(), [](auto* a, auto* b) { return a->id < b->id; });
  if (!cells.empty()) {
    for (auto* c : cells) out_.initial_bytes += AlignUp(c->memory_bytes, kCellAlign);
  } else {
    if (def_.memory_bytes <= device_bytes)
      throw DiagnosticError(PlanError(def_, def_.memory_line, "memory",
                                  "<memory> must be larger than the memory devices together"));
    out_.initial_bytes = AlignUp(def_.memory_bytes - device_bytes, kCellAlign);
  }
  if (def_.max_memory_bytes) {
    out_.max_bytes = AlignUp(*def_.max_memory_bytes, kCellAlign);
    out_.slots = def_.max_memory_slots;
  }

  if (cells.empty()) {
    MemoryBackend b;
    b.id = "pc.ram";
    b.size_bytes = out_.initial_bytes;
    Binding bind = NumatuneBinding(std::nullopt);
    b.host_nodes = bind.nodes;
    b.policy = bind.policy;
    // Without guest NUMA, <page nodeset='0'> still applies: the whole guest is node 0.
    Fill(b, CellPageSize(def_, host_, 0), mb.access, BackingDiscard(mb), "");
    bool plain = b.type == BackendType::kRam && b.host_nodes.Empty() && b.prealloc == PreallocBy::kNone;
    if (caps_.machine_memory_backend) {
      out_.machine_memory_backend = true;
      out_.backends.push_back(std::move(b));
    } else if (!plain) {
      throw DiagnosticError(PlanError(def_, mb.line ? mb.line : def_.memory_line, mb.line ? "memoryBacking" : "memory",
                                  "this QEMU has no -machine memory-backend=, needed for this memory "
                                  "configuration without guest NUMA cells"));
    }
  }
  for (auto* c : cells) {
    MemoryBackend b;
    b.id = "ram-node" + std::to_string(c->id);
    b.size_bytes = AlignUp(c->memory_bytes, kCellAlign);
    b.guest_node = c->id;
    Binding bind = NumatuneBinding(c->id);
    b.host_nodes = bind.nodes;
    b.policy = bind.policy;
    MemAccess access = c->access != MemAccess::kDefault ? c->access : mb.access;
    Fill(b, CellPageSize(def_, host_, c->id), access, c->discard ? c->discard : BackingDiscard(mb), "");
    out_.backends.push_back(std::move(b));
  }

  // Slots as libvirt assigns them: a DIMM keeps its <address slot>, the others take the
  // lowest slots nobody asked for, in document order. The slot also names the device
  // (dimm<slot>, memdimm<slot>), as in libvirt. virtio-mem takes no slot: it is named by its
  // rank among the virtio-mem devices (virtiomem<N>).
  const auto& mems = def_.devices.memory;
  IdSet taken;
  for (const auto& m : mems)
    if (m.slot && m.model != "virtio-mem") taken.Insert(*m.slot);
  std::vector<unsigned> names;  // the slot, or the virtio-mem rank
  unsigned next_free = 0, virtio_mem = 0;
  for (const auto& m : mems) {
    if (!def_.max_memory_bytes)
      throw DiagnosticError(PlanError(def_, m.line, "memory", "memory devices need <maxMemory slots='N'>"));
    if (m.model == "virtio-mem") {
      names.push_back(virtio_mem++);
      continue;
    }
    if (m.slot) {
      names.push_back(*m.slot);
      continue;
    }
    while (taken.Contains(next_free)) ++next_free;
    if (def_.max_memory_slots && next_free >= def_.max_memory_slots)
      throw DiagnosticError(PlanError(def_, m.line, "memory",
                                  "no free memory slot (maxMemory has " + std::to_string(def_.max_memory_slots) + ")"));
    taken.Insert(next_free);
    names.push_back(next_free);
  }
  for (size_t i = 0; i < mems.size(); ++i) PlanDevice(mems[i], names[i]);
  return std::move(out_);
}

void Planner::PlanDevice(const domain::MemoryDevice& m, unsigned name) {
  const domain::MemoryBacking& mb = def_.memory_backing;
  const bool nvdimm = m.model == "nvdimm";
  const bool virtio_mem = m.model == "virtio-mem";
  if (virtio_mem && !caps_.virtio_mem)
    throw DiagnosticError(PlanError(def_, m.line, "memory", "this QEMU has no virtio-mem-pci (QEMU 5.1 or newer)"));
  out_.has_nvdimm |= nvdimm;
  const std::string n = std::to_string(name);
  const char* kind = nvdimm ? "nvdimm" : virtio_mem ? "virtiomem" : "dimm";
  MemoryBackend b;
  b.id = std::string("mem") + kind + n;
  // libvirt rounds a DIMM up to 2 MiB and a virtio-mem device up to whole blocks.
  const uint64_t block = virtio_mem ? std::max<uint64_t>(m.block_bytes.value_or(kDimmAlign), 1) : 0;
  b.size_bytes = AlignUp(m.size_bytes, virtio_mem ? block : kDimmAlign);
  b.guest_node = m.node.value_or(0);
  b.is_device = true;
  const domain::NumaCell* cell = Cell(*b.guest_node);
  if (m.source_nodemask && !m.source_nodemask->Empty()) {
    CheckHostNodes(*m.source_nodemask, m.line, "memory");
    b.host_nodes = *m.source_nodemask;
    b.policy = "bind";
  } else {
    Binding bind = NumatuneBinding(b.guest_node);
    b.host_nodes = bind.nodes;
    b.policy = bind.policy;
  }
  PageChoice page = m.source_pagesize_bytes
                        ? ResolvePageSize(def_, host_, {*m.source_pagesize_bytes, m.line, "memory"})
                        : CellPageSize(def_, host_, *b.guest_node);
  MemAccess access = m.access;
  if (access == MemAccess::kDefault && cell != nullptr) access = cell->access;
  if (access == MemAccess::kDefault) access = mb.access;
  std::optional<bool> discard = m.discard ? m.discard : cell && cell->discard ? cell->discard : BackingDiscard(mb);
  Fill(b, page, access, discard, nvdimm ? m.source_path : "");
  MemoryDeviceArg dev;
  dev.driver = nvdimm ? "nvdimm" : virtio_mem ? "virtio-mem-pci" : "pc-dimm";
  dev.id = kind + n;
  dev.memdev = b.id;
  dev.node = *b.guest_node;
  dev.line = m.line;
  if (virtio_mem) {
    // As libvirt 9.0: the backend reserves nothing and preallocates nothing; the device
    // preallocates the blocks it plugs when the backend would have been preallocated.
    b.virtio_mem = true;
    b.plugged_bytes = m.requested_bytes.value_or(0);
    if (caps_.backend_reserve) b.reserve = false;
    const bool wanted = b.prealloc != PreallocBy::kNone;
    b.prealloc = PreallocBy::kNone;
    dev.block_size = block;
    if (m.requested_bytes.value_or(0) > 0) dev.requested_size = *m.requested_bytes;
    dev.prealloc = wanted && caps_.virtio_mem_prealloc;
    if (wanted && !caps_.virtio_mem_prealloc)
      out_.notes.push_back(PlanWarning(def_, m.line, "memory",
                                       "this QEMU's virtio-mem cannot preallocate what it plugs (QEMU 7.1 or "
                                       "newer); the guest touches its pages on demand"));
    dev.pci_address = m.pci_address;
  } else {
    dev.slot = name;
    dev.addr = m.base;
  }
  out_.backends.push_back(std::move(b));
  out_.devices.push_back(std::move(dev));
}

}  // namespace

MemoryLayout PlanMemory(const DomainDef& def, const HostTopology& host, const QemuCaps& caps,
                        const PlanOptions& opts) {
  return Planner(def, host, caps, opts).Run();
}

std::vector<LaunchPlan::PoolNeed> PoolNeeds(const std::vector<MemoryBackend>& backends) {
  std::map<std::pair<int, uint64_t>, uint64_t> need;
  for (const MemoryBackend& b : backends) {
    if (b.page_size_bytes == 0) continue;
    int node = b.policy == "bind" && b.host_nodes.Size() == 1 ? static_cast<int>(b.host_nodes.Max()) : -1;
    const uint64_t bytes = b.virtio_mem ? b.plugged_bytes : b.size_bytes;
    need[{node, b.page_size_bytes}] += (bytes + b.page_size_bytes - 1) / b.page_size_bytes;
  }
  std::vector<LaunchPlan::PoolNeed> out;
  for (const auto& [key, pages] : need) out.push_back({key.first, key.second, pages});
  return out;
}

}  // namespace qlaunch::qemu
