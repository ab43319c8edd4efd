// The section parsers behind ParseDomainXml: one per top-level element of <domain>.
// Each reads only what understood.cc lists; unsupported *values* are reported here.
#pragma once

#include <libxml/tree.h>

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

}  // namespace qlaunch::domain
