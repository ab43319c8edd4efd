// <features>, <clock>, <pm>, <sysinfo>: the machine around the devices.
#include "domain/parse_sections.h"
#include "domain/understood.h"

namespace qlaunch::domain {

void ParseMachine(ParseContext& ctx, const xmlNode* domain, DomainDef* def) {}

std::span<const UnderstoodElement> UnderstoodMachineElements() { return {}; }

}  // namespace qlaunch::domain
