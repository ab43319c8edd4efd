// virsh's scaled integers for memory sizes (setmem SIZE, update-memory-device --requested-size):
// digits, then a unit as libvirt spells it (KiB when none; k, M, G, T also in lower case).
#pragma once

#include <cstdint>
#include <string>

namespace qlaunch::launcher {

// Throws std::runtime_error "VERB: invalid memory size 'TEXT': ..." for anything else.
uint64_t VirshScaledSize(const std::string& text, const std::string& verb);

}  // namespace qlaunch::launcher
