// <interface>: user, ethernet and bridge networking, MAC, model, link state, boot order.
#include <cctype>

#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> NormalizeMac(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  for (int octet = 0; octet < 6; ++octet) {
    if (octet > 0) {
      if (i >= text.size() || text[i] != ':') return std::nullopt;
      ++i;
    }
    int value = 0, digits = 0;
    while (i < text.size() && digits < 3 && HexDigit(text[i]) >= 0) {
      value = value * 16 + HexDigit(text[i]);
      ++digits;
      ++i;
    }
    if (digits < 1 || digits > 2) return std::nullopt;
    if (octet > 0) out += ':';
    out += kHex[value >> 4];
    out += kHex[value & 15];
  }
  if (i != text.size()) return std::nullopt;
  return out;
}

bool IsMulticastMac(const std::string& normalized) {
  return normalized.size() >= 2 && (HexDigit(normalized[1]) & 1) != 0;
}

std::string InvalidIfnameReason(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.size() > 15) return "it is longer than 15 bytes (IFNAMSIZ)";
  if (name == "." || name == "..") return "'.' and '..' are not interface names";
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '/' || c == ':' || c == '%' || std::isspace(u) || u < 0x20 || u == 0x7f)
      return "it contains '" + std::string(1, std::isprint(u) ? c : '?') +
             "' (no '/', ':', '%', whitespace or control characters)";
  }
  return "";
}

std::optional<Interface> ParseInterface(ParseContext& ctx, const xmlNode* node) {
  Interface nic;
  nic.line = NodeLine(node);
  nic.type = RequiredAttr(ctx, node, "type");
  if (nic.type == "network")
    ctx.Fail(node, "interface type 'network' needs libvirt's managed networks (and their dnsmasq), which qlaunch "
                   "does not run; use type='bridge' with an existing bridge (<source bridge='virbr0'/>), "
                   "type='user' (QEMU's user-mode network), or type='ethernet' (a tap qlaunch creates)");
  if (Classify(ctx, node, "interface type", nic.type, {"user", "ethernet", "bridge"},
               {"vhostuser", "server", "client", "mcast", "udp", "internal", "direct", "hostdev", "vdpa", "null",
                "vds"}) == Support::kNo)
    return std::nullopt;

  if (const xmlNode* mac = UniqueChild(ctx, node, "mac")) {
    std::string text = RequiredAttr(ctx, mac, "address");
    std::optional<std::string> normalized = NormalizeMac(text);
    if (!normalized) ctx.Fail(mac, "unable to parse mac address '" + text + "' (expected six hex octets aa:bb:cc:dd:ee:ff)");
    if (IsMulticastMac(*normalized)) ctx.Fail(mac, "expected unicast mac address, found multicast '" + text + "'");
    nic.mac = *normalized;
    nic.mac_line = NodeLine(mac);
  }

  if (const xmlNode* model = UniqueChild(ctx, node, "model")) {
    nic.model = RequiredAttr(ctx, model, "type");
    if (Classify(ctx, model, "interface model", nic.model, {"virtio", "e1000", "e1000e", "rtl8139"},
                 {"virtio-transitional", "virtio-non-transitional", "usb-net", "ne2k_pci", "ne2k_isa", "pcnet",
                  "i82551", "i82557b", "i82559er", "vmxnet3", "igb", "spapr-vlan", "lan9118", "smc91c111",
                  "netfront"}) == Support::kNo)
      return std::nullopt;
  }

  const xmlNode* source = UniqueChild(ctx, node, "source");
  if (nic.type == "bridge") {
    if (!source) ctx.Fail(node, "interface type 'bridge' needs <source bridge='NAME'/>");
    nic.source_bridge = RequiredAttr(ctx, source, "bridge");
    if (std::string why = InvalidIfnameReason(nic.source_bridge); !why.empty())
      ctx.Fail(source, "invalid bridge name '" + nic.source_bridge + "': " + why);
  } else if (source) {
    ctx.Unsupported(source, "<source> of interface type '" + nic.type + "' not supported by qlaunch, ignored");
  }

  if (const xmlNode* target = UniqueChild(ctx, node, "target")) {
    nic.target_line = NodeLine(target);
    nic.target_dev = NodeAttr(target, "dev").value_or("");
    if (std::optional<bool> managed = YesNoAttr(ctx, target, "managed")) nic.target_managed = *managed;
    if (!nic.target_managed && nic.type != "ethernet")
      ctx.Fail(target, "managed='no' is only supported for interface type 'ethernet'");
    if (!nic.target_managed && nic.target_dev.empty())
      ctx.Fail(target, "<target managed='no'> needs dev='NAME' (the existing tap to use)");
    // libvirt drops a name it would have generated itself (vnetN) unless the tap is unmanaged.
    if (nic.target_managed && nic.target_dev.starts_with("vnet")) nic.target_dev.clear();
    if (!nic.target_dev.empty())
      if (std::string why = InvalidIfnameReason(nic.target_dev); !why.empty())
        ctx.Fail(target, "invalid tap name '" + nic.target_dev + "': " + why);
    if (nic.type == "user" && !nic.target_dev.empty()) {
      ctx.Unsupported(target, "<target dev> of interface type 'user' has no tap, ignored");
      nic.target_dev.clear();
    }
  }

  if (const xmlNode* link = UniqueChild(ctx, node, "link")) {
    std::string state = RequiredAttr(ctx, link, "state");
    if (state == "down") nic.link_up = false;
    else if (state != "up") ctx.Fail(link, "unknown link state '" + state + "' (expected up|down)");
  }

  nic.boot_order = ParseBootOrder(ctx, node);
  nic.address = ParsePciAddress(ctx, node, "interface");
  return nic;
}

std::span<const UnderstoodElement> UnderstoodNetElements() {
  static constexpr UnderstoodElement kElements[] = {
      {"domain/devices/interface", "type"},
      {"domain/devices/interface/mac", "address"},
      {"domain/devices/interface/model", "type"},
      {"domain/devices/interface/source", "bridge"},
      {"domain/devices/interface/target", "dev managed"},
      {"domain/devices/interface/link", "state"},
      {"domain/devices/interface/boot", "order"},
      {"domain/devices/interface/address", "type domain bus slot function multifunction"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
