// <controller>: usb, scsi, virtio-serial, sata, ide and pci controllers.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

std::optional<Controller> ParseController(ParseContext& ctx, const xmlNode* node) { return std::nullopt; }

std::span<const UnderstoodElement> UnderstoodControllerElements() { return {}; }

}  // namespace qlaunch::domain
