#include "prealloc/mem_policy.h"

#include <numaif.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>
#include <vector>

#include "prealloc/error.h"

namespace qlaunch::prealloc {
namespace {

constexpr unsigned kMaxNodeId = 4095;  // far above any real MAX_NUMNODES (1024)

int KernelMode(PolicyMode mode) {
  switch (mode) {
    case PolicyMode::kBind: return MPOL_BIND;
    case PolicyMode::kPreferred: return MPOL_PREFERRED;
    case PolicyMode::kInterleave: return MPOL_INTERLEAVE;
    case PolicyMode::kDefault: break;
  }
  return MPOL_DEFAULT;
}

// Nodes of `nodes` that the kernel does not show under /sys/devices/system/node.
IdSet MissingNodes(const IdSet& nodes) {
  IdSet missing;
  for (unsigned n : nodes)
    if (!std::filesystem::exists("/sys/devices/system/node/node" + std::to_string(n)))
      missing.Insert(n);
  return missing;
}

}  // namespace

std::optional<PolicyMode> ParsePolicyMode(std::string_view text) {
  if (text.empty() || text == "default") return PolicyMode::kDefault;
  if (text == "bind") return PolicyMode::kBind;
  if (text == "preferred") return PolicyMode::kPreferred;
  if (text == "interleave") return PolicyMode::kInterleave;
  return std::nullopt;
}

const char* ToString(PolicyMode mode) {
  switch (mode) {
    case PolicyMode::kDefault: return "default";
    case PolicyMode::kBind: return "bind";
    case PolicyMode::kPreferred: return "preferred";
    case PolicyMode::kInterleave: return "interleave";
  }
  return "?";
}

MemPolicy MemPolicy::Make(const std::string& what, std::string_view policy, const IdSet& nodes) {
  std::optional<PolicyMode> mode = ParsePolicyMode(policy);
  if (!mode)
    throw PreallocError(what + ": unknown memory policy '" + std::string(policy) +
                        "' (expected bind, preferred or interleave)");
  if (*mode == PolicyMode::kDefault && !nodes.Empty())
    throw PreallocError(what + ": host nodes " + nodes.ToString() +
                        " given without a policy (bind, preferred or interleave)");
  if (*mode != PolicyMode::kDefault && nodes.Empty())
    throw PreallocError(what + ": policy " + ToString(*mode) + " needs host nodes");
  if (!nodes.Empty() && nodes.Max() > kMaxNodeId)
    throw PreallocError(what + ": host node " + std::to_string(nodes.Max()) + " does not exist");
  return MemPolicy{*mode, nodes};
}

void ApplyMemPolicy(void* addr, size_t len, const MemPolicy& policy, const std::string& what) {
  if (policy.mode == PolicyMode::kDefault) return;
  constexpr unsigned kBits = sizeof(unsigned long) * CHAR_BIT;
  // The kernel reads maxnode-1 bits; pass one spare bit like numactl and QEMU do.
  const unsigned long maxnode = policy.nodes.Max() + 2;
  std::vector<unsigned long> mask((maxnode + kBits - 1) / kBits, 0);
  for (unsigned n : policy.nodes) mask[n / kBits] |= 1ul << (n % kBits);
  // The system call itself, as libnuma's mbind() makes it: linking that wrapper would bring
  // libnuma's constructor into qlaunch, which reads /proc and sysfs at every exec (numa/libnuma_check.h).
  if (::syscall(SYS_mbind, addr, len, KernelMode(policy.mode), mask.data(), maxnode, 0) == 0) return;

  int err = errno;
  std::string base = what + ": cannot apply policy " + ToString(policy.mode) + " to host nodes " +
                     policy.nodes.ToString();
  if (err == EINVAL) {
    IdSet missing = MissingNodes(policy.nodes);
    if (!missing.Empty())
      throw PreallocError(base + ": host node" + (missing.Size() > 1 ? "s " : " ") +
                          missing.ToString() + (missing.Size() > 1 ? " do" : " does") +
                          " not exist");
    throw PreallocError(ErrnoMessage(
        base + ": the nodes have no memory or are outside this process's cpuset (mbind)", err));
  }
  if (err == ENOSYS) throw PreallocError(base + ": the kernel has no NUMA support (mbind)");
  throw PreallocError(ErrnoMessage(base + " (mbind)", err));
}

}  // namespace qlaunch::prealloc
