// update-memory-device --requested-size as libvirt 9.0 does it for virtio-mem, pure: which
// <memory model='virtio-mem'> of the running definition is meant (by alias, by guest node, or
// the only one), libvirt's checks of the new size, and the QMP command (qom-set of the device's
// requested-size). The device's alias is the one plan.json recorded for it (`aliases`: the
// virtio-mem devices' ids in document order, attach-device's included); without a record, its
// rank among the virtio-mem devices (virtiomem<N>), as qemu_cmd/memory_plan.h names it at start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "domain/domain_def.h"
#include "qemu_cmd/media_change_plan.h"

namespace qlaunch::qemu {

struct VirtioMemSelector {
  std::string alias;              // "" : any
  std::optional<unsigned> node;   // the guest node (<target><node>)
};

struct VirtioMemResize {
  size_t index = 0;               // in def.devices.memory
  std::string alias;              // virtiomem<N>
  std::string memdev;             // memvirtiomem<N>
  unsigned node = 0;
  uint64_t size_bytes = 0;        // the device's size (rounded up to whole blocks, as at start)
  uint64_t block_bytes = 0;
  uint64_t old_requested = 0, new_requested = 0;
  QmpCommand command;             // qom-set /machine/peripheral/<alias> requested-size
};

// Throws std::runtime_error (libvirt's words where libvirt has them): no virtio-mem device, none
// matching, more than one matching, a size beyond the device or not in whole blocks.
VirtioMemResize PlanVirtioMemResize(const domain::DomainDef& running, const VirtioMemSelector& which,
                                    uint64_t requested_bytes, const std::vector<std::string>& aliases = {});

}  // namespace qlaunch::qemu
