// <memballoon>, <rng>, <watchdog>.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

std::optional<MemBalloon> ParseMemBalloon(ParseContext& ctx, const xmlNode* node) {
  MemBalloon balloon;
  balloon.line = NodeLine(node);
  balloon.model = RequiredAttr(ctx, node, "model");
  if (Classify(ctx, node, "memballoon model", balloon.model, {"virtio", "none"},
               {"virtio-transitional", "virtio-non-transitional", "xen"}) == Support::kNo)
    return std::nullopt;
  balloon.autodeflate = OnOffAttr(ctx, node, "autodeflate");
  balloon.free_page_reporting = OnOffAttr(ctx, node, "freePageReporting");
  balloon.address = ParsePciAddress(ctx, node, "memballoon");
  return balloon;
}

std::optional<Rng> ParseRng(ParseContext& ctx, const xmlNode* node) {
  Rng rng;
  rng.line = NodeLine(node);
  rng.model = RequiredAttr(ctx, node, "model");
  if (Classify(ctx, node, "rng model", rng.model, {"virtio"}, {"virtio-transitional", "virtio-non-transitional"}) ==
      Support::kNo)
    return std::nullopt;
  const xmlNode* backend = UniqueChild(ctx, node, "backend");
  if (!backend) ctx.Fail(node, "missing backend for random number generator device");
  rng.backend_model = RequiredAttr(ctx, backend, "model");
  if (Classify(ctx, backend, "rng backend model", rng.backend_model, {"random", "egd"}, {"builtin"}) == Support::kNo)
    return std::nullopt;
  if (rng.backend_model == "random") {
    rng.source = TrimSpace(NodeText(backend));
    if (rng.source.empty()) rng.source = "/dev/random";  // libvirt 9.0's default (checked)
    if (rng.source != "/dev/random" && rng.source != "/dev/urandom" && rng.source != "/dev/hwrng")
      ctx.Fail(backend, "file '" + rng.source + "' is not a supported random source");
  } else {
    rng.egd_type = RequiredAttr(ctx, backend, "type");
    if (Classify(ctx, backend, "rng egd backend type", rng.egd_type, {"tcp", "unix"},
                 {"pty", "file", "udp", "null", "stdio", "pipe", "dev", "vc", "spicevmc", "spiceport", "nmdm",
                  "qemu-vdagent", "dbus"}) == Support::kNo)
      return std::nullopt;
    const xmlNode* source = UniqueChild(ctx, backend, "source");
    if (!source) ctx.Fail(backend, "missing <source> of the egd backend");
    rng.egd_mode = NodeAttr(source, "mode").value_or("connect");
    if (rng.egd_mode != "bind" && rng.egd_mode != "connect")
      FailInvalidValue(ctx, source, "mode", rng.egd_mode, "expected bind|connect");
    rng.egd_host = NodeAttr(source, "host").value_or("");
    rng.egd_service = NodeAttr(source, "service").value_or("");
    rng.egd_path = NodeAttr(source, "path").value_or("");
    if (rng.egd_type == "tcp" && (rng.egd_host.empty() || rng.egd_service.empty()))
      ctx.Fail(source, "Missing source host or service attribute for the egd backend");
    if (rng.egd_type == "unix" && rng.egd_path.empty()) ctx.Fail(source, "Missing source path attribute for the egd backend");
    if (const xmlNode* protocol = UniqueChild(ctx, backend, "protocol")) {
      std::string type = NodeAttr(protocol, "type").value_or("raw");
      if (Classify(ctx, protocol, "egd protocol type", type, {"raw"}, {"telnet", "telnets", "tls"}) == Support::kNo)
        return std::nullopt;
    }
  }
  if (const xmlNode* rate = UniqueChild(ctx, node, "rate")) {
    rng.rate_bytes = NonZeroUIntAttr(ctx, rate, "bytes");
    if (!rng.rate_bytes) ctx.Fail(rate, "missing rate bytes");
    rng.rate_period = NonZeroUIntAttr(ctx, rate, "period");
  }
  rng.address = ParsePciAddress(ctx, node, "rng");
  return rng;
}

std::optional<Watchdog> ParseWatchdog(ParseContext& ctx, const xmlNode* node) {
  Watchdog w;
  w.line = NodeLine(node);
  w.model = RequiredAttr(ctx, node, "model");
  // itco is libvirt 9.1's (9.0 refuses it); diag288 is s390's.
  if (Classify(ctx, node, "watchdog model", w.model, {"i6300esb", "ib700"}, {"itco", "diag288"}) == Support::kNo)
    return std::nullopt;
  w.action = NodeAttr(node, "action").value_or("reset");
  Classify(ctx, node, "watchdog action", w.action, {"reset", "shutdown", "poweroff", "pause", "none", "dump", "inject-nmi"},
           {});
  // The i6300esb is a PCI device; the ib700 sits on ISA.
  w.address = w.model == "i6300esb" ? ParsePciAddress(ctx, node, "watchdog i6300esb") : ParseAddress(ctx, node);
  if (w.model != "i6300esb" && !w.address.type.empty() && w.address.type != "isa")
    ctx.Fail(node, "watchdog ib700 is an ISA device");
  return w;
}

std::span<const UnderstoodElement> UnderstoodMiscDeviceElements() {
  static constexpr UnderstoodElement kElements[] = {
    {"domain/devices/memballoon", "model autodeflate freePageReporting"},
    {"domain/devices/memballoon/address", "type domain bus slot function multifunction"},
    {"domain/devices/rng", "model"},
    {"domain/devices/rng/backend", "model type"},
    {"domain/devices/rng/backend/source", "mode host service path"},
    {"domain/devices/rng/backend/protocol", "type"},
    {"domain/devices/rng/rate", "bytes period"},
    {"domain/devices/rng/address", "type domain bus slot function multifunction"},
    {"domain/devices/watchdog", "model action"},
    {"domain/devices/watchdog/address", "type domain bus slot function multifunction"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
