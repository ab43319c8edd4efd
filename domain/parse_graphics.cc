// <graphics>, <video>, <input>, <sound>, <redirdev>: what a user sees, hears and types with.
#include <charconv>

#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

namespace {

// libvirt's port attributes are signed ints ("-1" = pick one).
std::optional<int> PortAttr(const ParseContext& ctx, const xmlNode* node, const std::string& type) {
  std::optional<std::string> text = NodeAttr(node, "port");
  if (!text) return std::nullopt;
  int v = 0;
  std::string_view s = TrimSpace(*text);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    ctx.Fail(node, "cannot parse " + type + " port '" + *text + "'");
  return v;
}

// <listen> children: the first one decides (libvirt uses only the first for QEMU).
// Returns false when the graphics element is to be skipped (an unsupported listen type).
bool ParseListen(ParseContext& ctx, const xmlNode* node, Graphics* g) {
  std::optional<std::string> attr = NodeAttr(node, "listen");
  std::vector<const xmlNode*> listens = ElementChildren(node, "listen");
  if (!listens.empty()) {
    const xmlNode* first = listens.front();
    std::string type = NodeAttr(first, "type").value_or("");
    if (type.empty()) ctx.Fail(first, "graphics listen type must be specified");
    if (Classify(ctx, first, "graphics listen type", type, {"address", "none"}, {"network", "socket"}) ==
        Support::kNo)
      return false;
    if (type == "none") {
      if (attr) ctx.Fail(node, "graphics 'listen' attribute '" + *attr + "' given with <listen type='none'>");
      g->listen_none = true;
      return true;
    }
    std::string address = NodeAttr(first, "address").value_or("");
    if (attr && !address.empty() && *attr != address)
      ctx.Fail(node, "graphics 'listen' attribute '" + *attr + "' must match 'address' attribute of first listen "
                     "element (found '" + address + "')");
    g->listen = address.empty() ? attr.value_or("") : address;
  } else if (attr) {
    g->listen = *attr;
  }
  if (g->listen.find_first_of(" \t\n\r") != std::string::npos || g->listen.find('\0') != std::string::npos)
    ctx.Fail(node, "invalid graphics listen address '" + g->listen + "'");
  return true;
}

}  // namespace

std::optional<Graphics> ParseGraphics(ParseContext& ctx, const xmlNode* node) {
  Graphics g;
  g.line = NodeLine(node);
  g.type = RequiredAttr(ctx, node, "type");
  if (Classify(ctx, node, "graphics type", g.type, {"vnc", "spice"}, {"sdl", "rdp", "desktop", "egl-headless", "dbus"}) ==
      Support::kNo)
    return std::nullopt;
  g.port = PortAttr(ctx, node, g.type);
  std::optional<bool> autoport = YesNoAttr(ctx, node, "autoport");
  if (g.type == "vnc") {
    // vnc: no port or port='-1' is autoport; autoport='yes' wins over a port.
    g.autoport = autoport.value_or(false) || !g.port || *g.port == -1;
    if (!g.autoport && (*g.port < 5900 || *g.port > 65535))
      ctx.Fail(node, "vnc port must be in range [5900,65535] (or -1 with autoport), got " + std::to_string(*g.port));
  } else {
    // spice: port='-1' or autoport='yes' picks one; without either there is no TCP port.
    g.autoport = autoport.value_or(false) || (g.port && *g.port == -1);
    if (!g.autoport && g.port && (*g.port < 0 || *g.port > 65535))
      ctx.Fail(node, "spice port must be in range [0,65535] (or -1 with autoport), got " + std::to_string(*g.port));
    if (!g.autoport && g.port && *g.port == 0) g.port.reset();
  }
  if (g.autoport) g.port.reset();
  if (std::optional<std::string> tls = NodeAttr(node, "tlsPort"); tls && g.type == "spice" && TrimSpace(*tls) != "-1")
    // libvirt with its default qemu.conf (spice_tls = 0) refuses it too; tlsPort='-1' (what
    // virt-install writes) means no TLS port there.
    ctx.Fail(node, "spice TLS port set in XML configuration, but TLS is disabled (qlaunch has no spice TLS)");
  if (const xmlNode* image = UniqueChild(ctx, node, "image"); image && g.type == "spice") {
    g.image_compression = RequiredAttr(ctx, image, "compression");
    if (Classify(ctx, image, "spice image compression", g.image_compression,
                 {"auto_glz", "auto_lz", "quic", "glz", "lz", "off"}, {}) == Support::kNo)
      return std::nullopt;
  }
  if (NodeAttr(node, "passwd")) {
    // libvirt sets it over QMP (set_password) once QEMU runs; qlaunch does not, and a display
    // without the password the user asked for would be open to anyone who can reach it.
    ctx.Unsupported(node, "graphics passwd not supported by qlaunch (it cannot set a " + g.type +
                              " password), element ignored");
    return std::nullopt;
  }
  if (!ParseListen(ctx, node, &g)) return std::nullopt;
  return g;
}

std::optional<Video> ParseVideo(ParseContext& ctx, const xmlNode* node) {
  Video v;
  v.line = NodeLine(node);
  v.model = "cirrus";  // libvirt 9.0's default on x86 (QEMU has cirrus-vga)
  if (const xmlNode* model = UniqueChild(ctx, node, "model")) {
    v.model = NodeAttr(model, "type").value_or("");
    if (v.model.empty()) ctx.Fail(model, "missing video model type");
    if (Classify(ctx, model, "video model", v.model, {"vga", "cirrus", "virtio", "qxl", "bochs", "none"},
                 {"vmvga", "xen", "vbox", "parallels", "gop", "ramfb"}) == Support::kNo)
      return std::nullopt;
    v.vram = UIntAttr(ctx, model, "vram");
    v.ram = UIntAttr(ctx, model, "ram");
    v.vgamem = UIntAttr(ctx, model, "vgamem");
    v.vram64 = UIntAttr(ctx, model, "vram64");
    v.heads = NonZeroUIntAttr(ctx, model, "heads");
    v.primary = YesNoAttr(ctx, model, "primary").value_or(false);
    if (v.heads && *v.heads > 1 && (v.model == "vga" || v.model == "cirrus" || v.model == "bochs"))
      ctx.Fail(model, "video type '" + v.model + "' doesn't support multiple 'heads'");
    if (v.heads && *v.heads > 16) ctx.Fail(model, "video heads must be at most 16");
  }
  v.address = ParseAddress(ctx, node);
  return v;
}

std::optional<Input> ParseInput(ParseContext& ctx, const xmlNode* node) {
  Input in;
  in.line = NodeLine(node);
  in.type = RequiredAttr(ctx, node, "type");
  if (Classify(ctx, node, "input type", in.type, {"tablet", "mouse", "keyboard"}, {"passthrough", "evdev"}) ==
      Support::kNo)
    return std::nullopt;
  in.bus = NodeAttr(node, "bus").value_or(in.type == "tablet" ? "usb" : "ps2");
  if (Classify(ctx, node, "input bus", in.bus, {"ps2", "usb", "virtio"}, {"xen", "parallels", "none"}) ==
      Support::kNo)
    return std::nullopt;
  if (in.bus == "ps2" && in.type == "tablet") ctx.Fail(node, "ps2 bus does not support tablet input device");
  in.address = ParseAddress(ctx, node);
  return in;
}

std::optional<Sound> ParseSound(ParseContext& ctx, const xmlNode* node) {
  Sound s;
  s.line = NodeLine(node);
  s.model = RequiredAttr(ctx, node, "model");
  if (Classify(ctx, node, "sound model", s.model, {"ich9", "ich6", "ac97"},
               {"sb16", "es1370", "pcspk", "ich7", "usb", "ics2000"}) == Support::kNo)
    return std::nullopt;
  for (const xmlNode* codec : ElementChildren(node, "codec")) {
    std::string type = RequiredAttr(ctx, codec, "type");
    if (Classify(ctx, codec, "sound codec type", type, {"duplex", "micro", "output"}, {}) == Support::kNo)
      return std::nullopt;
    if (s.model == "ac97") ctx.Fail(codec, "sound model 'ac97' has no codecs");
    s.codecs.push_back(type);
  }
  s.address = ParseAddress(ctx, node);
  return s;
}

std::optional<RedirDev> ParseRedirDev(ParseContext& ctx, const xmlNode* node) {
  RedirDev r;
  r.line = NodeLine(node);
  r.bus = NodeAttr(node, "bus").value_or("usb");
  if (r.bus != "usb") ctx.Fail(node, "unknown redirdev bus '" + r.bus + "' (expected usb)");
  r.type = RequiredAttr(ctx, node, "type");
  if (Classify(ctx, node, "redirdev type", r.type, {"spicevmc"},
               {"tcp", "unix", "pty", "file", "null", "udp", "dev", "pipe", "stdio", "vc"}) == Support::kNo)
    return std::nullopt;
  r.address = ParseAddress(ctx, node);
  return r;
}

std::span<const UnderstoodElement> UnderstoodGraphicsElements() {
  static constexpr UnderstoodElement kElements[] = {
    {"domain/devices/graphics", "type port autoport listen passwd tlsPort"},
    {"domain/devices/graphics/image", "compression"},
    {"domain/devices/graphics/listen", "type address"},
    {"domain/devices/video", ""},
    {"domain/devices/video/model", "type vram ram vgamem vram64 heads primary"},
    {"domain/devices/video/address", "type domain bus slot function multifunction"},
    {"domain/devices/input", "type bus"},
    {"domain/devices/input/address", "type domain bus slot function multifunction port"},
    {"domain/devices/sound", "model"},
    {"domain/devices/sound/codec", "type"},
    {"domain/devices/sound/address", "type domain bus slot function multifunction"},
    {"domain/devices/redirdev", "bus type"},
    {"domain/devices/redirdev/address", "type bus port"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
