// MemPolicy: the NUMA placement of a memory region, as QEMU's memory-backend "policy" and
// "host-nodes" name it, and its application with mbind(2).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/id_set.h"

namespace qlaunch::prealloc {

enum class PolicyMode { kDefault, kBind, kPreferred, kInterleave };

// "" or "default", "bind", "preferred", "interleave"; std::nullopt otherwise.
std::optional<PolicyMode> ParsePolicyMode(std::string_view text);
const char* ToString(PolicyMode mode);

struct MemPolicy {
  PolicyMode mode = PolicyMode::kDefault;
  IdSet nodes;  // empty exactly when mode is kDefault

  // Throws PreallocError for an unknown policy, nodes without a policy or a policy without
  // nodes. `what` names the region in the message.
  static MemPolicy Make(const std::string& what, std::string_view policy, const IdSet& nodes);
};

// mbind(2) on [addr, addr+len) before any page is touched; no-op for kDefault. Throws
// PreallocError naming the nodes ("host node 5 does not exist or has no memory") on failure.
void ApplyMemPolicy(void* addr, size_t len, const MemPolicy& policy, const std::string& what);

}  // namespace qlaunch::prealloc
