// <vcpu>, <cputune> and <cpu> (model, topology, guest NUMA cells).
#include "domain/parse_sections.h"

#include <cctype>
#include <string>

namespace qlaunch::domain {

namespace {

constexpr EnumName<bool> kOnOffNames[] = {{"on", true}, {"off", false}};

constexpr EnumName<std::string_view> kCpuModes[] = {{"custom", "custom"},
                                                    {"host-model", "host-model"},
                                                    {"host-passthrough", "host-passthrough"},
                                                    {"maximum", "maximum"}};

CpuTopology ParseTopology(ParseContext& ctx, const xmlNode* node) {
  CpuTopology topo;
  topo.line = NodeLine(node);
  RequiredAttr(ctx, node, "sockets");
  RequiredAttr(ctx, node, "cores");
  RequiredAttr(ctx, node, "threads");
  topo.sockets = *NonZeroUIntAttr(ctx, node, "sockets");
  topo.dies = NonZeroUIntAttr(ctx, node, "dies").value_or(1);
  topo.clusters = NonZeroUIntAttr(ctx, node, "clusters").value_or(1);
  topo.cores = *NonZeroUIntAttr(ctx, node, "cores");
  topo.threads = *NonZeroUIntAttr(ctx, node, "threads");
  return topo;
}

NumaCell ParseCell(ParseContext& ctx, const xmlNode* node, unsigned index) {
  NumaCell cell;
  cell.line = NodeLine(node);
  cell.id = UIntAttr(ctx, node, "id").value_or(index);  // libvirt: cells without ids get their index
  cell.cpus = IdSetAttr(ctx, node, "cpus").value_or(IdSet{});  // absent: a CPU-less cell
  cell.memory_bytes = SizeAttr(ctx, node, "memory");
  cell.access = EnumAttr(ctx, node, "memAccess", kMemAccessNames).value_or(MemAccess::kDefault);
  cell.discard = YesNoAttr(ctx, node, "discard");
  return cell;
}

std::vector<NumaCell> ParseCells(ParseContext& ctx, const xmlNode* numa) {
  std::vector<NumaCell> cells;
  for (const xmlNode* cell : ElementChildren(numa, "cell"))
    cells.push_back(ParseCell(ctx, cell, static_cast<unsigned>(cells.size())));
  if (cells.empty()) ctx.Fail(numa, "NUMA topology defined without NUMA cells");
  return cells;
}

constexpr EnumName<std::string_view> kCpuMatches[] = {
    {"exact", "exact"}, {"minimum", "minimum"}, {"strict", "strict"}};
constexpr EnumName<std::string_view> kCpuChecks[] = {{"none", "none"}, {"partial", "partial"}, {"full", "full"}};
constexpr EnumName<std::string_view> kFallbacks[] = {{"allow", "allow"}, {"forbid", "forbid"}};
constexpr EnumName<std::string_view> kFeaturePolicies[] = {{"force", "force"},
                                                           {"require", "require"},
                                                           {"optional", "optional"},
                                                           {"disable", "disable"},
                                                           {"forbid", "forbid"}};

// <feature policy name> children; a name QEMU would read as more than one -cpu property is refused.
std::vector<CpuFeature> ParseCpuFeatures(ParseContext& ctx, const xmlNode* node) {
  std::vector<CpuFeature> out;
  for (const xmlNode* child : ElementChildren(node, "feature")) {
    CpuFeature f;
    f.line = NodeLine(child);
    f.name = RequiredAttr(ctx, child, "name");
    f.policy = std::string(EnumAttr(ctx, child, "policy", kFeaturePolicies).value_or("require"));
    for (char ch : f.name)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.'))
        ctx.Fail(child, "invalid CPU feature name '" + f.name + "'");
    for (const CpuFeature& other : out)
      if (other.name == f.name) ctx.Fail(child, "CPU feature '" + f.name + "' specified more than once");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Vcpu ParseVcpu(ParseContext& ctx, const xmlNode* node) {
  Vcpu vcpu;
  vcpu.line = NodeLine(node);
  vcpu.count = UIntText(ctx, node);
  if (vcpu.count == 0) ctx.Fail(node, "vcpu count must be greater than 0");
  vcpu.current = UIntAttr(ctx, node, "current");
  vcpu.placement = EnumAttr(ctx, node, "placement", kPlacementNames).value_or(Placement::kDefault);
  vcpu.cpuset = IdSetAttr(ctx, node, "cpuset");
  return vcpu;
}

void ParseVcpuStates(ParseContext& ctx, const xmlNode* node, Vcpu* vcpu) {
  vcpu->states_line = NodeLine(node);
  for (const xmlNode* child : ElementChildren(node, "vcpu")) {
    VcpuState st;
    st.line = NodeLine(child);
    st.id = RequiredUIntAttr(ctx, child, "id");
    RequiredAttr(ctx, child, "enabled");
    st.enabled = *YesNoAttr(ctx, child, "enabled");
    st.hotpluggable = YesNoAttr(ctx, child, "hotpluggable").value_or(false);
    st.order = UIntAttr(ctx, child, "order").value_or(0);
    for (const VcpuState& other : vcpu->states)
      if (other.id == st.id) ctx.Fail(child, "duplicate vcpu id '" + std::to_string(st.id) + "'");
    vcpu->states.push_back(st);
  }
}

CpuTune ParseCpuTune(ParseContext& ctx, const xmlNode* node) {
  CpuTune tune;
  if (const xmlNode* pin = UniqueChild(ctx, node, "emulatorpin")) {
    if (!NodeAttr(pin, "cpuset")) ctx.Fail(pin, "missing cpuset for emulatorpin");
    tune.emulatorpin = IdSetAttr(ctx, pin, "cpuset");
    tune.emulatorpin_line = NodeLine(pin);
  }
  for (const xmlNode* pin : ElementChildren(node, "vcpupin")) {
    VcpuPin vcpupin;
    vcpupin.line = NodeLine(pin);
    vcpupin.vcpu = RequiredUIntAttr(ctx, pin, "vcpu");
    if (!NodeAttr(pin, "cpuset")) ctx.Fail(pin, "missing cpuset for vcpupin");
    vcpupin.cpuset = *IdSetAttr(ctx, pin, "cpuset");
    tune.vcpupins.push_back(std::move(vcpupin));
  }
  return tune;
}

CpuDef ParseCpu(ParseContext& ctx, const xmlNode* node) {
  CpuDef cpu;
  cpu.line = NodeLine(node);
  if (auto mode = EnumAttr(ctx, node, "mode", kCpuModes)) cpu.mode = std::string(*mode);
  if (auto match = EnumAttr(ctx, node, "match", kCpuMatches)) cpu.match = std::string(*match);
  if (auto check = EnumAttr(ctx, node, "check", kCpuChecks)) cpu.check = std::string(*check);
  cpu.migratable = EnumAttr(ctx, node, "migratable", kOnOffNames);
  if (const xmlNode* model = UniqueChild(ctx, node, "model")) {
    cpu.model = std::string(TrimSpace(NodeText(model)));
    if (auto fallback = EnumAttr(ctx, model, "fallback", kFallbacks)) cpu.fallback = std::string(*fallback);
  }
  cpu.features = ParseCpuFeatures(ctx, node);
  if (!cpu.features.empty() && cpu.model.empty() && (cpu.mode.empty() || cpu.mode == "custom"))
    ctx.Fail(node, "Non-empty feature list specified without CPU model");
  if (const xmlNode* topology = UniqueChild(ctx, node, "topology")) cpu.topology = ParseTopology(ctx, topology);
  if (const xmlNode* numa = UniqueChild(ctx, node, "numa")) {
    cpu.numa_line = NodeLine(numa);
    cpu.cells = ParseCells(ctx, numa);
  }
  return cpu;
}

}  // namespace qlaunch::domain
