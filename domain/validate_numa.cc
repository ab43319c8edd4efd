// Guest NUMA cells (<cpu><numa>) and <numatune>.
#include <set>

#include "domain/validate_checks.h"

namespace qlaunch::domain {

namespace {

std::string Id(unsigned id) { return std::to_string(id); }

void CheckCellIds(const DomainDef& def, Findings& out) {
  const auto& cells = def.cpu.cells;
  std::set<unsigned> seen;
  for (const NumaCell& cell : cells) {
    if (cell.id >= cells.size())
      out.Error(cell.line, "cell",
                "Exactly one 'cell' element per guest NUMA cell allowed, non-contiguous ranges or ranges not "
                "starting from 0 are not allowed (cell id " + Id(cell.id) + ", " + Id(cells.size()) + " cells)");
    if (!seen.insert(cell.id).second)
      out.Error(cell.line, "cell", "Duplicate NUMA cell info for cell id '" + Id(cell.id) + "'");
  }
}

void CheckCellCpus(const DomainDef& def, Findings& out) {
  const auto& cells = def.cpu.cells;
  for (size_t i = 0; i < cells.size(); ++i) {
    const NumaCell& cell = cells[i];
    if (!cell.cpus.Empty() && cell.cpus.Max() >= def.vcpu.count)
      out.Error(cell.line, "cell",
                "CPU IDs in <numa> exceed the <vcpu> count (cell " + Id(cell.id) + " cpus " + cell.cpus.ToString() +
                    ", vcpu " + Id(def.vcpu.count) + ")");
    for (size_t j = 0; j < i; ++j)
      if (cells[j].cpus.Intersects(cell.cpus))
        out.Error(cell.line, "cell",
                  "NUMA cells " + Id(cells[j].id) + " and " + Id(cell.id) + " have overlapping vCPU ids (" +
                      cells[j].cpus.Intersect(cell.cpus).ToString() + ")");
  }
}

Placement EffectivePlacement(const DomainDef& def) {
  // libvirt's virDomainNumatuneSet: an explicit placement wins; a nodeset means static; otherwise
  // the memory follows the <vcpu> placement (static unless 'auto').
  const NumaTune& tune = def.numatune;
  if (tune.placement != Placement::kDefault) return tune.placement;
  if (tune.nodeset) return Placement::kStatic;
  return def.vcpu.placement == Placement::kAuto ? Placement::kAuto : Placement::kStatic;
}

void CheckNumaTuneMemory(const DomainDef& def, Findings& out) {
  const NumaTune& tune = def.numatune;
  if (!tune.mode && !tune.nodeset && tune.placement == Placement::kDefault) return;  // no <memory>
  if (tune.nodeset && tune.nodeset->Empty())
    out.Error(tune.memory_line, "memory", "Invalid value of 'nodeset': empty set");
  Placement placement = EffectivePlacement(def);
  if (placement == Placement::kStatic && !tune.nodeset)
    out.Error(tune.memory_line, "memory", "nodeset for NUMA memory tuning must be set if 'placement' is 'static'");
  if (placement == Placement::kAuto && !tune.memnodes.empty())
    out.Error(tune.memnodes.front().line, "memnode", "Per-node binding is not compatible with automatic NUMA placement.");
  if (tune.mode == NumaMode::kRestrictive)
    for (const MemNode& memnode : tune.memnodes)
      if (memnode.mode != NumaMode::kRestrictive)
        out.Error(memnode.line, "memnode",
                  "'restrictive' mode is required in memnode element when mode is 'restrictive' in memory element");
}

void CheckMemNodes(const DomainDef& def, Findings& out) {
  const auto& memnodes = def.numatune.memnodes;
  if (memnodes.empty()) return;
  if (def.cpu.cells.empty()) {
    out.Error(memnodes.front().line, "memnode", "Element 'memnode' is invalid without any guest NUMA cells");
    return;
  }
  std::set<unsigned> cell_ids, seen;
  for (const NumaCell& cell : def.cpu.cells) cell_ids.insert(cell.id);
  for (const MemNode& memnode : memnodes) {
    if (!cell_ids.contains(memnode.cellid))
      out.Error(memnode.line, "memnode",
                "Argument 'cellid' in memnode element must correspond to existing guest's NUMA cell (cellid " +
                    Id(memnode.cellid) + ")");
    if (!seen.insert(memnode.cellid).second)
      out.Error(memnode.line, "memnode", "Multiple memnode elements with cellid " + Id(memnode.cellid));
    if (memnode.nodeset.Empty()) out.Error(memnode.line, "memnode", "Invalid value of 'nodeset': empty set");
  }
}

}  // namespace

void CheckNumaCells(const DomainDef& def, Findings& out) {
  CheckCellIds(def, out);
  CheckCellCpus(def, out);
}

void CheckNumaTune(const DomainDef& def, Findings& out) {
  CheckNumaTuneMemory(def, out);
  CheckMemNodes(def, out);
}

}  // namespace qlaunch::domain
