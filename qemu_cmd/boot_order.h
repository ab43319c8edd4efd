// Which device boots first: libvirt 9.0 gives every bootable device a bootindex and renders
// only "-boot strict=on". With a <boot order> on any device those orders are used as they are;
// otherwise each <os><boot dev> in turn names the first device of its kind: hd the first disk,
// cdrom the first cdrom, network the first interface (fd: floppies are not supported); with
// neither, libvirt's default <boot dev='hd'/>.
#pragma once

#include <map>

#include "domain/domain_def.h"

namespace qlaunch::qemu {

struct BootIndexes {
  std::map<size_t, unsigned> disks;  // index in devices.disks -> bootindex
  std::map<size_t, unsigned> nets;   // index in devices.interfaces -> bootindex
};

// Throws DiagnosticError when two devices have the same <boot order>, or when devices have
// <boot order> and <os> has <boot dev> (libvirt refuses that mix too).
BootIndexes PlanBootIndexes(const domain::DomainDef& def);

}  // namespace qlaunch::qemu
