// <controller>: usb, scsi, virtio-serial, sata, ide and pci controllers.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

namespace {

// libvirt reads these numbers with base 0: "0x10" is hexadecimal, "16" decimal.
std::optional<unsigned> NumberAttr(ParseContext& ctx, const xmlNode* node, std::string_view name, unsigned max) {
  std::optional<std::string> text = NodeAttr(node, name);
  if (!text) return std::nullopt;
  std::string_view s = TrimSpace(*text);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t v = 0;
  bool ok = !s.empty() && s.size() <= 10;
  for (char c : s) {
    int d = (c >= '0' && c <= '9') ? c - '0'
            : (base == 16 && c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (base == 16 && c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                   : -1;
    if (d < 0) ok = false;
    v = v * base + (d < 0 ? 0 : d);
  }
  if (!ok || v > max)
    FailInvalidValue(ctx, node, name, *text, "Expected an integer from 0 to " + std::to_string(max));
  return static_cast<unsigned>(v);
}

// The models of each type qlaunch supports, and those libvirt knows besides.
Support ClassifyModel(ParseContext& ctx, const xmlNode* node, const std::string& type, const std::string& model) {
  if (type == "usb")
    return Classify(ctx, node, "usb controller model", model,
                    {"piix3-uhci", "ich9-ehci1", "ich9-uhci1", "ich9-uhci2", "ich9-uhci3", "qemu-xhci", "nec-xhci",
                     "none"},
                    {"piix4-uhci", "ehci", "vt82c686b-uhci", "pci-ohci", "qusb1", "qusb2"});
  if (type == "scsi")
    return Classify(ctx, node, "scsi controller model", model, {"virtio-scsi", "lsilogic"},
                    {"auto", "buslogic", "lsisas1068", "lsisas1078", "vmpvscsi", "ibmvscsi", "virtio-transitional",
                     "virtio-non-transitional", "ncr53c90", "am53c974", "dc390"});
  if (type == "pci")
    return Classify(ctx, node, "pci controller model", model,
                    {"pci-root", "pcie-root", "pcie-root-port", "pci-bridge", "pcie-to-pci-bridge"},
                    {"dmi-to-pci-bridge", "pcie-switch-upstream-port", "pcie-switch-downstream-port",
                     "pci-expander-bus", "pcie-expander-bus"});
  if (type == "virtio-serial")
    return Classify(ctx, node, "virtio-serial controller model", model, {"virtio"},
                    {"virtio-transitional", "virtio-non-transitional"});
  if (type == "ide")
    return Classify(ctx, node, "ide controller model", model, {"piix3", "ich6"}, {"piix4"});
  return Classify(ctx, node, type + " controller model", model, {}, {});
}

}  // namespace

std::optional<Controller> ParseController(ParseContext& ctx, const xmlNode* node) {
  Controller c;
  c.line = NodeLine(node);
  c.type = RequiredAttr(ctx, node, "type");
  if (Classify(ctx, node, "controller type", c.type, {"usb", "scsi", "virtio-serial", "sata", "ide", "pci"},
               {"fdc", "ccid", "xenbus", "isa"}) == Support::kNo)
    return std::nullopt;
  c.index = NumberAttr(ctx, node, "index", c.type == "pci" ? 254 : 1023);
  c.model = NodeAttr(node, "model").value_or("");
  if (c.type == "pci" && c.model.empty())
    ctx.Fail(node, "Missing required attribute 'model' in element 'controller' of type 'pci'");
  if (!c.model.empty() && ClassifyModel(ctx, node, c.type, c.model) == Support::kNo) return std::nullopt;
  if (c.type == "pci" && c.index) {
    bool root = c.model == "pci-root" || c.model == "pcie-root";
    if (root != (*c.index == 0))
      ctx.Fail(node, root ? "The PCI controller with index='0' must be model='pci-root' or 'pcie-root'"
                          : "Only the root PCI controller (pci-root or pcie-root) may have index='0'");
  }
  if (c.type == "usb" || c.type == "virtio-serial") c.ports = NumberAttr(ctx, node, "ports", 31);
  if (c.type == "virtio-serial") c.vectors = NumberAttr(ctx, node, "vectors", 1024);
  if (const xmlNode* master = UniqueChild(ctx, node, "master")) {
    if (c.type != "usb") ctx.Fail(master, "<master> is only for usb companion controllers");
    c.master_startport = NumberAttr(ctx, master, "startport", 31);
    if (!c.master_startport) ctx.Fail(master, "Missing required attribute 'startport' in element 'master'");
  }
  if (const xmlNode* model = UniqueChild(ctx, node, "model")) {
    if (c.type != "pci") ctx.Fail(model, "<model name> is only for pci controllers");
    c.model_name = RequiredAttr(ctx, model, "name");
    if (Classify(ctx, model, "pci controller model name", c.model_name,
                 {"pcie-root-port", "pci-bridge", "pcie-pci-bridge"},
                 {"ioh3420", "i82801b11-bridge", "x3130-upstream", "xio3130-downstream", "pxb", "pxb-pcie",
                  "spapr-pci-host-bridge"}) == Support::kNo)
      return std::nullopt;
  }
  if (const xmlNode* target = UniqueChild(ctx, node, "target")) {
    if (c.type != "pci") ctx.Fail(target, "<target> is only for pci controllers");
    c.chassis = NumberAttr(ctx, target, "chassis", 255);
    c.port = NumberAttr(ctx, target, "port", 255);
    c.chassis_nr = NumberAttr(ctx, target, "chassisNr", 255);
  }
  c.address = ParseAddress(ctx, node);
  return c;
}

std::span<const UnderstoodElement> UnderstoodControllerElements() {
  static constexpr UnderstoodElement kElements[] = {
    {"domain/devices/controller", "type index model ports vectors"},
    {"domain/devices/controller/master", "startport"},
    {"domain/devices/controller/model", "name"},
    {"domain/devices/controller/target", "chassis port chassisNr"},
    {"domain/devices/controller/address", "type domain bus slot function multifunction"},
  };
  return kElements;
}

}  // namespace qlaunch::domain
