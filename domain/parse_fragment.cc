#include "domain/parse_fragment.h"

#include <libxml/tree.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "domain/parse_sections.h"
#include "domain/understood.h"
#include "domain/xml_doc.h"
#include "domain/xml_node.h"

namespace qlaunch::domain {

namespace {

constexpr size_t kMaxBytes = 1 << 20;

[[noreturn]] void FailFile(const std::string& file, const std::string& message) {
  throw DiagnosticError(Diagnostic{Severity::kError, file, 0, "", message});
}

// The parser's unsupported findings say "..., ignored"; here they are refusals.
void ThrowRefusals(const ParseContext& ctx) {
  try {
    ctx.ThrowStrictFindings();
  } catch (const DiagnosticError& e) {
    std::vector<Diagnostic> out = e.diagnostics();
    for (Diagnostic& d : out)
      for (std::string_view tail : {", element ignored", ", ignored"})
        if (d.message.size() > tail.size() && d.message.ends_with(tail)) {
          d.message.resize(d.message.size() - tail.size());
          break;
        }
    throw DiagnosticError(std::move(out));
  }
}

size_t Count(const Devices& d) {
  return d.memory.size() + (d.memballoon ? 1 : 0) + d.disks.size() + d.controllers.size() + d.interfaces.size() +
         d.chardevs.size() + d.graphics.size() + d.videos.size() + d.inputs.size() + d.sounds.size() +
         d.redirdevs.size() + d.rngs.size() + d.watchdogs.size() + (d.panic ? 1 : 0);
}

}  // namespace

DeviceFragment ParseDeviceXml(std::string_view xml, const std::string& file) {
  if (xml.size() > kMaxBytes) FailFile(file, "device XML is larger than 1 MiB");
  XmlDoc doc = XmlDoc::Parse(xml, file);
  ParseContext ctx(file, /*strict=*/true);
  xmlNode* root = xmlDocGetRootElement(doc.MutableDoc());
  DeviceFragment out;
  out.file = file;
  out.text = std::string(xml);
  out.element = NodeName(root);
  out.line = NodeLine(root);
  if (out.element == "domain" || out.element == "devices")
    ctx.Fail(root, "expected one device element (<disk>, <interface>, ...), not a whole <" + out.element + ">");
  if (out.element == "emulator") ctx.Fail(root, "<emulator> is not a device");
  CheckUnderstoodAt(root, "domain/devices", ctx);
  ThrowRefusals(ctx);
  // The family parsers dispatch from a <devices> parent: give the element one, keeping its line.
  xmlNode* devices = xmlNewDocNode(doc.MutableDoc(), nullptr, BAD_CAST "devices", nullptr);
  xmlUnlinkNode(root);
  xmlAddChild(devices, root);
  xmlDocSetRootElement(doc.MutableDoc(), devices);
  out.devices = ParseDevices(ctx, devices);
  ThrowRefusals(ctx);
  if (Count(out.devices) != 1) ctx.Fail(root, "<" + out.element + "> is not a device qlaunch can attach or detach");
  out.warnings = ctx.TakeWarnings();
  return out;
}

DeviceFragment ParseDeviceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) FailFile(path, std::string("cannot open the device XML: ") + std::strerror(errno));
  std::string bytes;
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<size_t>(in.gcount()));
    if (bytes.size() > kMaxBytes) FailFile(path, "device XML is larger than 1 MiB");
  }
  return ParseDeviceXml(bytes, path);
}

}  // namespace qlaunch::domain
