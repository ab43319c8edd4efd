#include "domain/understood.h"

#include <string>
#include <vector>

#include "domain/xml_node.h"

namespace qlaunch::domain {

namespace {

// The single list of what qlaunch reads from a libvirt domain XML. Anything not here is reported.
constexpr UnderstoodElement kUnderstood[] = {
    {"domain", "type id"},  // id: of a running domain, in the live XML (qlaunch dumpxml, virsh dumpxml)
    {"domain/name", ""},
    {"domain/uuid", ""},
    {"domain/title", ""},             // informational, no effect on the VM
    {"domain/description", ""},       // informational, no effect on the VM
    {"domain/metadata", "", true},    // application data, no effect on the VM
    {"domain/memory", "unit"},
    {"domain/currentMemory", "unit"},
    {"domain/maxMemory", "slots unit"},
    {"domain/vcpu", "placement cpuset current"},
    {"domain/vcpus", ""},  // the live XML's vCPU states (setvcpus)
    {"domain/vcpus/vcpu", "id enabled hotpluggable order"},
    {"domain/cputune", ""},
    {"domain/cputune/emulatorpin", "cpuset"},
    {"domain/cputune/vcpupin", "vcpu cpuset"},
    {"domain/cpu", "mode match check migratable"},  // match/check/migratable: the machine family
    {"domain/cpu/model", "fallback"},
    {"domain/cpu/topology", "sockets dies clusters cores threads"},
    {"domain/cpu/numa", ""},
    {"domain/cpu/numa/cell", "id cpus memory unit memAccess discard"},
    {"domain/numatune", ""},
    {"domain/numatune/memory", "mode nodeset placement"},
    {"domain/numatune/memnode", "cellid mode nodeset"},
    {"domain/memoryBacking", ""},
    {"domain/memoryBacking/hugepages", ""},
    {"domain/memoryBacking/hugepages/page", "size unit nodeset"},
    {"domain/memoryBacking/nosharepages", ""},
    {"domain/memoryBacking/locked", ""},
    {"domain/memoryBacking/source", "type"},
    {"domain/memoryBacking/access", "mode"},
    {"domain/memoryBacking/allocation", "mode threads"},
    {"domain/memoryBacking/discard", ""},
    {"domain/os", "firmware"},  // firmware=: the machine family (parse_os.cc)
    {"domain/os/type", "arch machine"},
    {"domain/os/kernel", ""},
    {"domain/os/initrd", ""},
    {"domain/os/cmdline", ""},
    {"domain/os/boot", "dev"},
    {"domain/devices", ""},
    {"domain/devices/emulator", ""},
    {"domain/devices/memory", "model access discard"},
    {"domain/devices/memory/source", ""},
    {"domain/devices/memory/source/pagesize", "unit"},
    {"domain/devices/memory/source/nodemask", ""},
    {"domain/devices/memory/source/path", ""},
    {"domain/devices/memory/target", ""},
    {"domain/devices/memory/target/size", "unit"},
    {"domain/devices/memory/target/node", ""},
    {"domain/devices/memory/target/block", "unit"},
    {"domain/devices/memory/target/requested", "unit"},
    {"domain/devices/memory/target/current", "unit"},  // virtio-mem's plugged size in a live XML: output only
    {"domain/devices/memory/address", "type slot base domain bus function multifunction"},
    {"domain/seclabel", "type model relabel"},
    {"domain/on_poweroff", ""},
    {"domain/on_reboot", ""},
    {"domain/on_crash", ""},
    {"domain/devices/panic", "model"},
    {"domain/seclabel/label", ""},
};

bool HasWord(std::string_view words, std::string_view word) {
  while (!words.empty()) {
    size_t space = words.find(' ');
    if (words.substr(0, space) == word) return true;
    if (space == std::string_view::npos) break;
    words.remove_prefix(space + 1);
  }
  return false;
}

// Every device of a live XML (`qlaunch dumpxml`, `virsh dumpxml`) carries its <alias name>: the id
// QEMU knew it by. Read and ignored, as libvirt ignores it on define.
bool IsDeviceAlias(std::string_view path) {
  constexpr std::string_view kDevices = "domain/devices/", kAlias = "/alias";
  if (!path.starts_with(kDevices) || !path.ends_with(kAlias)) return false;
  const std::string_view device = path.substr(kDevices.size(), path.size() - kDevices.size() - kAlias.size());
  return !device.empty() && device.find('/') == std::string_view::npos;
}

void CheckElement(const xmlNode* node, const std::string& path, ParseContext& ctx) {
  std::optional<UnderstoodElement> entry = FindUnderstood(path);
  if (!entry && IsDeviceAlias(path)) entry = UnderstoodElement{path, "name"};
  if (!entry) {
    ctx.Unsupported(node, "element not supported by qlaunch, ignored");
    return;
  }
  for (const std::string& attr : AttributeNames(node))
    if (!HasWord(entry->attributes, attr))
      ctx.Unsupported(node, "attribute '" + attr + "' not supported by qlaunch, ignored");
  if (entry->any_content) return;
  for (const xmlNode* child : ElementChildren(node)) CheckElement(child, path + "/" + NodeName(child), ctx);
}

}  // namespace

std::span<const UnderstoodElement> UnderstoodElements() {
  static const std::vector<UnderstoodElement> all = [] {
    std::vector<UnderstoodElement> v(std::begin(kUnderstood), std::end(kUnderstood));
    for (auto family : {UnderstoodDiskElements(), UnderstoodControllerElements(), UnderstoodNetElements(),
                        UnderstoodCharDevElements(), UnderstoodGraphicsElements(),
                        UnderstoodMiscDeviceElements(), UnderstoodMachineElements()})
      v.insert(v.end(), family.begin(), family.end());
    return v;
  }();
  return all;
}

std::optional<UnderstoodElement> FindUnderstood(std::string_view path) {
  for (const UnderstoodElement& entry : UnderstoodElements())
    if (entry.path == path) return entry;
  return std::nullopt;
}

void CheckUnderstood(const xmlNode* root, ParseContext& ctx) { CheckElement(root, NodeName(root), ctx); }

void CheckUnderstoodAt(const xmlNode* node, std::string_view parent_path, ParseContext& ctx) {
  CheckElement(node, std::string(parent_path) + "/" + NodeName(node), ctx);
}

}  // namespace qlaunch::domain
