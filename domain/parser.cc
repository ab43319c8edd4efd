// ParseDomainXml: the <domain> element walk. Sections live in parse_*.cc; what is understood at
// all is the table in understood.cc.
#include "domain/parser.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "domain/memory_totals.h"
#include "domain/parse_sections.h"
#include "domain/understood.h"
#include "domain/xml_doc.h"

namespace qlaunch::domain {

namespace {

[[noreturn]] void FailFile(const std::string& file, std::string message) {
  throw DiagnosticError(Diagnostic{Severity::kError, file, 0, "", std::move(message)});
}

std::string LimitText(size_t max_bytes) {
  return "the limit of " + std::to_string(max_bytes) + " bytes (ParseOptions::max_bytes)";
}

bool IsUuid(std::string_view text) {
  size_t digits = 0;
  for (char c : text) {
    if (c == '-') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    ++digits;
  }
  return digits == 32 && text.front() != '-' && text.back() != '-';
}

void ParseIdentity(ParseContext& ctx, const xmlNode* root, DomainDef& def) {
  std::optional<std::string> type = NodeAttr(root, "type");
  if (!type) ctx.Fail(root, "missing domain type attribute");
  def.type = *type;
  if (def.type != "kvm" && def.type != "qemu")
    ctx.Unsupported(root, "domain type '" + def.type + "' not supported by qlaunch (kvm|qemu)");
  if (const xmlNode* name = UniqueChild(ctx, root, "name")) {
    def.name = NodeText(name);
    def.name_line = NodeLine(name);
  }
  if (const xmlNode* uuid = UniqueChild(ctx, root, "uuid")) {
    def.uuid = std::string(TrimSpace(NodeText(uuid)));
    if (!IsUuid(def.uuid)) ctx.Fail(uuid, "malformed uuid element '" + def.uuid + "'");
  }
}

void ParseMemorySizes(ParseContext& ctx, const xmlNode* root, DomainDef& def) {
  if (const xmlNode* memory = UniqueChild(ctx, root, "memory")) {
    def.memory_bytes = SizeText(ctx, memory);
    def.memory_line = NodeLine(memory);
  }
  if (const xmlNode* current = UniqueChild(ctx, root, "currentMemory")) {
    def.current_memory_bytes = SizeText(ctx, current);
    def.current_memory_line = NodeLine(current);
  }
  if (const xmlNode* max = UniqueChild(ctx, root, "maxMemory")) {
    def.max_memory_bytes = SizeText(ctx, max);
    def.max_memory_slots = UIntAttr(ctx, max, "slots").value_or(0);
    def.max_memory_line = NodeLine(max);
  }
}

// libvirt: without <memory> the size comes from the NUMA cells (plus memory devices).
void DefaultMemoryFromCells(const ParseContext& ctx, const xmlNode* root, DomainDef& def) {
  if (def.memory_bytes != 0) return;
  if (def.cpu.cells.empty()) ctx.Fail(root, "Memory size must be specified via <memory> or in the <numa> configuration");
  def.memory_bytes = SaturatingAdd(NumaCellsMemoryBytes(def), MemoryDevicesBytes(def));  // no wrap-around
}

DomainDef ParseDomainElement(ParseContext& ctx, const xmlNode* root) {
  DomainDef def;
  def.file = ctx.file();
  ParseIdentity(ctx, root, def);
  ParseMemorySizes(ctx, root, def);
  if (const xmlNode* node = UniqueChild(ctx, root, "vcpu")) def.vcpu = ParseVcpu(ctx, node);
  if (const xmlNode* node = UniqueChild(ctx, root, "vcpus")) ParseVcpuStates(ctx, node, &def.vcpu);
  if (const xmlNode* node = UniqueChild(ctx, root, "cputune")) def.cputune = ParseCpuTune(ctx, node);
  if (const xmlNode* node = UniqueChild(ctx, root, "cpu")) def.cpu = ParseCpu(ctx, node);
  if (const xmlNode* node = UniqueChild(ctx, root, "numatune")) def.numatune = ParseNumaTune(ctx, node);
  if (const xmlNode* node = UniqueChild(ctx, root, "memoryBacking")) def.memory_backing = ParseMemoryBacking(ctx, node);
  if (const xmlNode* node = UniqueChild(ctx, root, "os")) def.os = ParseOs(ctx, node);
  if (const xmlNode* node = UniqueChild(ctx, root, "devices")) def.devices = ParseDevices(ctx, node);
  def.seclabel = ParseSecLabels(ctx, root);
  def.lifecycle = ParseLifecycle(ctx, root);
  ParseMachine(ctx, root, &def);
  DefaultMemoryFromCells(ctx, root, def);
  return def;
}

}  // namespace

const xmlNode* UniqueChild(const ParseContext& ctx, const xmlNode* parent, std::string_view name) {
  std::vector<const xmlNode*> children = ElementChildren(parent, name);
  if (children.size() > 1)
    ctx.Fail(children[1], "element <" + std::string(name) + "> may appear only once in <" + NodeName(parent) + ">");
  return children.empty() ? nullptr : children.front();
}

DomainDef ParseDomainXml(std::string_view xml, const std::string& file_name, const ParseOptions& opts) {
  if (xml.size() > opts.max_bytes)
    FailFile(file_name, "document is " + std::to_string(xml.size()) + " bytes, larger than " + LimitText(opts.max_bytes));
  XmlDoc doc = XmlDoc::Parse(xml, file_name);
  ParseContext ctx(file_name, opts.strict);
  const xmlNode* root = doc.Root();
  if (NodeName(root) != "domain")
    ctx.Fail(root, "root element is <" + NodeName(root) + ">, expected a libvirt <domain>");
  CheckUnderstood(root, ctx);
  DomainDef def = ParseDomainElement(ctx, root);
  ctx.ThrowStrictFindings();
  def.warnings = ctx.TakeWarnings();
  return def;
}

DomainDef ParseDomainFile(const std::string& path, const ParseOptions& opts) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) FailFile(path, "is a directory, expected a domain XML file");
  std::ifstream in(path, std::ios::binary);
  if (!in) FailFile(path, std::string("cannot open: ") + std::strerror(errno));
  std::string bytes;
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<size_t>(in.gcount()));
    if (bytes.size() > opts.max_bytes) FailFile(path, "file is larger than " + LimitText(opts.max_bytes));
  }
  if (in.bad()) FailFile(path, std::string("cannot read: ") + std::strerror(errno));
  return ParseDomainXml(bytes, path, opts);
}

}  // namespace qlaunch::domain
