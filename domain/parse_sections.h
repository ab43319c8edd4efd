// The section parsers behind ParseDomainXml: one per top-level element of <domain>.
// Each reads only what understood.cc lists; unsupported *values* are reported here.
#pragma once

#include <libxml/tree.h>

#include <initializer_list>
#include <optional>
#include <string_view>

#include "domain/domain_def.h"
#include "domain/parse_context.h"
#include "domain/parse_values.h"

namespace qlaunch::domain {

inline constexpr EnumName<Placement> kPlacementNames[] = {{"static", Placement::kStatic},
                                                          {"auto", Placement::kAuto}};
inline constexpr EnumName<MemAccess> kMemAccessNames[] = {{"shared", MemAccess::kShared},
                                                          {"private", MemAccess::kPrivate}};
inline constexpr EnumName<NumaMode> kNumaModeNames[] = {{"strict", NumaMode::kStrict},
                                                        {"preferred", NumaMode::kPreferred},
                                                        {"interleave", NumaMode::kInterleave},
                                                        {"restrictive", NumaMode::kRestrictive}};

// The only child element named `name`, nullptr when absent; more than one is an error.
const xmlNode* UniqueChild(const ParseContext& ctx, const xmlNode* parent, std::string_view name);

Vcpu ParseVcpu(ParseContext& ctx, const xmlNode* node);
// <vcpus> (libvirt's live XML) into `vcpu`.
void ParseVcpuStates(ParseContext& ctx, const xmlNode* node, Vcpu* vcpu);
CpuTune ParseCpuTune(ParseContext& ctx, const xmlNode* node);
CpuDef ParseCpu(ParseContext& ctx, const xmlNode* node);
NumaTune ParseNumaTune(ParseContext& ctx, const xmlNode* node);
MemoryBacking ParseMemoryBacking(ParseContext& ctx, const xmlNode* node);
OsDef ParseOs(ParseContext& ctx, const xmlNode* node);
Devices ParseDevices(ParseContext& ctx, const xmlNode* node);
// The <seclabel model='dac'> among the domain's <seclabel> elements (others are unsupported).
SecLabel ParseSecLabels(ParseContext& ctx, const xmlNode* domain);
Lifecycle ParseLifecycle(ParseContext& ctx, const xmlNode* domain);
// std::nullopt for a model libvirt knows but qlaunch does not support (reported as unsupported).
std::optional<MemoryDevice> ParseMemoryDevice(ParseContext& ctx, const xmlNode* node);

// ---- device families: one parse file each (domain/parse_<family>.cc) ----------------------
// Each returns nullopt for an element qlaunch reports as unsupported (ctx.Unsupported) and
// skips; invalid input throws through ctx.Fail with the element's line.

// A value is supported, known to libvirt but not supported here (reported, element skipped:
// kNo), or invalid (ctx.Fail: "unknown WHAT 'VALUE' (expected A|B)").
enum class Support { kYes, kNo };
Support Classify(ParseContext& ctx, const xmlNode* node, std::string_view what, const std::string& value,
                 std::initializer_list<std::string_view> supported,
                 std::initializer_list<std::string_view> libvirt_only);
// <address> child of a device element (domain/parse_address.cc); type "" when absent.
DeviceAddress ParseAddress(ParseContext& ctx, const xmlNode* device);
// ParseAddress for a device that only sits on PCI: any other address type is an error naming
// `what` ("memballoon", "interface", ...).
DeviceAddress ParsePciAddress(ParseContext& ctx, const xmlNode* device, std::string_view what);
// <boot order='N'/> child of a device; nullopt when absent.
std::optional<unsigned> ParseBootOrder(ParseContext& ctx, const xmlNode* device);

std::optional<Disk> ParseDisk(ParseContext& ctx, const xmlNode* node);                   // parse_disk.cc
std::optional<Controller> ParseController(ParseContext& ctx, const xmlNode* node);       // parse_controller.cc
std::optional<Interface> ParseInterface(ParseContext& ctx, const xmlNode* node);         // parse_net.cc
std::optional<CharDev> ParseCharDev(ParseContext& ctx, const xmlNode* node);             // parse_chardev.cc
std::optional<Graphics> ParseGraphics(ParseContext& ctx, const xmlNode* node);           // parse_graphics.cc
std::optional<Video> ParseVideo(ParseContext& ctx, const xmlNode* node);                 //   "
std::optional<Input> ParseInput(ParseContext& ctx, const xmlNode* node);                 //   "
std::optional<Sound> ParseSound(ParseContext& ctx, const xmlNode* node);                 //   "
std::optional<RedirDev> ParseRedirDev(ParseContext& ctx, const xmlNode* node);           //   "
std::optional<MemBalloon> ParseMemBalloon(ParseContext& ctx, const xmlNode* node);       // parse_misc_devices.cc
std::optional<Rng> ParseRng(ParseContext& ctx, const xmlNode* node);                     //   "
std::optional<Watchdog> ParseWatchdog(ParseContext& ctx, const xmlNode* node);           //   "
// <features>, <clock>, <pm>, <sysinfo> (children of <domain>) into def (parse_machine.cc).
void ParseMachine(ParseContext& ctx, const xmlNode* domain, DomainDef* def);

}  // namespace qlaunch::domain
