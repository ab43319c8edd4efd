#include "qemu_cmd/virtio_mem_resize_plan.h"

#include <stdexcept>
#include <vector>

#include "qemu_cmd/memory_plan.h"

namespace qlaunch::qemu {

namespace {

std::string KiB(uint64_t bytes) { return std::to_string(bytes / 1024) + "KiB"; }

}  // namespace

VirtioMemResize PlanVirtioMemResize(const domain::DomainDef& running, const VirtioMemSelector& which,
                                    uint64_t requested_bytes, const std::vector<std::string>& aliases) {
  std::vector<VirtioMemResize> all, matching;
  unsigned rank = 0;
  for (size_t i = 0; i < running.devices.memory.size(); ++i) {
    const domain::MemoryDevice& m = running.devices.memory[i];
    if (m.model != "virtio-mem") continue;
    VirtioMemResize r;
    r.index = i;
    r.alias = rank < aliases.size() ? aliases[rank] : "virtiomem" + std::to_string(rank);
    r.memdev = "mem" + r.alias;
    ++rank;
    r.node = m.node.value_or(0);
    r.block_bytes = m.block_bytes.value_or(kDimmAlign);
    r.size_bytes = AlignUp(m.size_bytes, r.block_bytes);
    r.old_requested = m.requested_bytes.value_or(0);
    all.push_back(r);
    if ((which.alias.empty() || which.alias == r.alias) && (!which.node || *which.node == r.node))
      matching.push_back(r);
  }
  std::string listed;
  for (const VirtioMemResize& r : all)
    listed += (listed.empty() ? "" : ", ") + r.alias + " (node " + std::to_string(r.node) + ")";
  if (all.empty()) throw std::runtime_error("no memory device found: the domain has no <memory model='virtio-mem'>");
  if (matching.empty())
    throw std::runtime_error("no memory device found" +
                             (which.alias.empty() ? std::string() : " with alias '" + which.alias + "'") +
                             (which.node ? " on guest node " + std::to_string(*which.node) : std::string()) +
                             " (the domain's virtio-mem devices: " + listed + ")");
  if (matching.size() > 1)
    throw std::runtime_error("multiple memory devices found: give --alias or --node (" + listed + ")");
  VirtioMemResize r = matching.front();
  if (requested_bytes > r.size_bytes)
    throw std::runtime_error("requested size must be smaller than or equal to @size (" + KiB(r.size_bytes) + ")");
  if (requested_bytes % r.block_bytes != 0)
    throw std::runtime_error("requested size must be an integer multiple of block size (" + KiB(r.block_bytes) + ")");
  r.new_requested = requested_bytes;
  r.command.execute = "qom-set";
  r.command.arguments = {{"path", "/machine/peripheral/" + r.alias}, {"property", "requested-size"},
                         {"value", requested_bytes}};
  return r;
}

}  // namespace qlaunch::qemu
