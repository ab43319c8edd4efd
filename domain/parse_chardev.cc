// <serial>, <console>, <channel>: the character devices and their host side.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

namespace {

// <source> of a host side that is a socket, a file or a pty. Returns false when the element
// is skipped (reported).
bool ParseSource(ParseContext& ctx, const xmlNode* node, CharDev* chr) {
  const xmlNode* source = UniqueChild(ctx, node, "source");
  if (source) {
    chr->path = NodeAttr(source, "path").value_or("");  // pty: the live /dev/pts/N, ignored
    chr->mode = NodeAttr(source, "mode").value_or("");
    chr->host = NodeAttr(source, "host").value_or("");
    chr->service = NodeAttr(source, "service").value_or("");
    if (chr->type == "file") chr->append = OnOffAttr(ctx, source, "append").value_or(false);
  }
  if (chr->type == "unix" || chr->type == "tcp") {
    if (chr->mode.empty()) chr->mode = "connect";  // libvirt's default
    if (chr->mode != "bind" && chr->mode != "connect")
      FailInvalidValue(ctx, source, "mode", chr->mode, "expected bind|connect");
  } else {
    chr->mode.clear();
  }
  // A unix channel without a path: libvirt's (and qlaunch's) own socket, always a server.
  const bool own_socket = chr->type == "unix" && chr->kind == "channel" && chr->path.empty();
  if (own_socket) chr->mode = "bind";
  if ((chr->type == "file" || chr->type == "unix") && chr->path.empty() && !own_socket)
    ctx.Fail(node, "Missing source path attribute for char device");
  if (chr->path.find('\0') != std::string::npos) ctx.Fail(node, "a NUL byte in the source path");
  if (chr->type == "tcp") {
    if (chr->host.empty()) ctx.Fail(node, "Missing source host attribute for char device");
    if (chr->service.empty()) ctx.Fail(node, "Missing source service attribute for char device");
    chr->protocol = "raw";
    if (const xmlNode* protocol = UniqueChild(ctx, node, "protocol")) {
      chr->protocol = NodeAttr(protocol, "type").value_or("raw");
      if (Classify(ctx, protocol, "chardev protocol type", chr->protocol, {"raw", "telnet"}, {"telnets", "tls"}) ==
          Support::kNo)
        return false;
    }
  }
  return true;
}

// <target>: the guest side. Returns false when the element is skipped (reported).
bool ParseTarget(ParseContext& ctx, const xmlNode* node, CharDev* chr) {
  const xmlNode* target = UniqueChild(ctx, node, "target");
  std::optional<std::string> type = target ? NodeAttr(target, "type") : std::nullopt;
  if (chr->kind == "serial") {
    chr->target_type = type.value_or("isa-serial");
    if (Classify(ctx, node, "serial target type", chr->target_type, {"isa-serial", "pci-serial"},
                 {"usb-serial", "spapr-vio-serial", "system-serial", "sclp-serial", "isa-debug"}) == Support::kNo)
      return false;
    if (const xmlNode* model = target ? UniqueChild(ctx, target, "model") : nullptr) {
      // libvirt's live XML names the QEMU device again: <model name='isa-serial'/>.
      std::string name = RequiredAttr(ctx, model, "name");
      if (name != chr->target_type)
        ctx.Fail(model, "serial target model '" + name + "' does not match target type '" + chr->target_type + "'");
    }
    if (target) chr->target_port = UIntAttr(ctx, target, "port");
  } else if (chr->kind == "console") {
    chr->target_type = type.value_or("serial");
    if (Classify(ctx, node, "console target type", chr->target_type, {"serial", "virtio"},
                 {"xen", "sclp", "sclplm", "lxc", "openvz", "uml"}) == Support::kNo)
      return false;
    if (target) chr->target_port = UIntAttr(ctx, target, "port");
  } else {  // channel
    if (!type) ctx.Fail(target ? target : node, "target type must be specified for channel device");
    chr->target_type = *type;
    if (Classify(ctx, target, "channel target type", chr->target_type, {"virtio"}, {"guestfwd", "xen"}) ==
        Support::kNo)
      return false;
    chr->target_name = NodeAttr(target, "name").value_or("");
    if (chr->type == "spicevmc" && chr->target_name.empty()) chr->target_name = "com.redhat.spice.0";
  }
  return true;
}

}  // namespace

std::optional<CharDev> ParseCharDev(ParseContext& ctx, const xmlNode* node) {
  CharDev chr;
  chr.line = NodeLine(node);
  chr.kind = NodeName(node);
  chr.type = NodeAttr(node, "type").value_or("pty");
  if (Classify(ctx, node, chr.kind + " type", chr.type, {"pty", "file", "null", "stdio", "unix", "tcp", "spicevmc"},
               {"vc", "dev", "pipe", "udp", "spiceport", "nmdm", "qemu-vdagent", "dbus"}) == Support::kNo)
    return std::nullopt;
  if (chr.type == "spicevmc" && chr.kind != "channel")
    ctx.Fail(node, chr.kind + " type 'spicevmc' is only supported for a <channel> by qlaunch");
  if (!ParseSource(ctx, node, &chr)) return std::nullopt;
  if (!ParseTarget(ctx, node, &chr)) return std::nullopt;
  chr.address = ParseAddress(ctx, node);
  const bool virtio = chr.kind == "channel" || chr.target_type == "virtio";
  const std::string& at = chr.address.type;
  if (!at.empty() && !(virtio && at == "virtio-serial") && !(chr.target_type == "pci-serial" && at == "pci") &&
      !(chr.target_type == "isa-serial" && at == "isa"))
    ctx.Fail(node, "address type '" + at + "' does not fit a " + chr.kind + " with target type '" + chr.target_type +
                       "'");
  if (at == "virtio-serial" && chr.address.port && *chr.address.port == 0 && chr.kind == "channel")
    ctx.Fail(node, "virtio-serial port 0 is reserved for a virtio console");
  return chr;
}

std::span<const UnderstoodElement> UnderstoodCharDevElements() {
  static constexpr UnderstoodElement kElements[] = {
    {"domain/devices/serial", "type tty"},  // tty: the pty of a live XML
    {"domain/devices/serial/source", "path mode host service append"},
    {"domain/devices/serial/protocol", "type"},
    {"domain/devices/serial/target", "type port"},
    {"domain/devices/serial/target/model", "name"},
    {"domain/devices/serial/address", "type domain bus slot function multifunction"},
    {"domain/devices/console", "type tty"},
    {"domain/devices/console/source", "path mode host service append"},
    {"domain/devices/console/protocol", "type"},
    {"domain/devices/console/target", "type port"},
    {"domain/devices/console/address", "type controller bus port"},
    {"domain/devices/channel", "type"},
    {"domain/devices/channel/source", "path mode host service append"},
    {"domain/devices/channel/protocol", "type"},
    {"domain/devices/channel/target", "type name"},
    {"domain/devices/channel/address", "type controller bus port"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
