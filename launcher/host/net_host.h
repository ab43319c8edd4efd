// The host side of <interface> (launcher/host/net_host.cc): taps as libvirt 9.0 makes them.
// Plan checks without changing the host: a bridge exists, /dev/net/tun is usable, a managed
// tap's name is free, an unmanaged tap exists. Create opens each tap on /dev/net/tun (not
// persistent, so it disappears with the last fd, QEMU's: nothing is left after destroy or a
// failed start), sets its MAC (the guest's with fe as first octet) and, for a bridge, the
// bridge's MTU, attaches it and brings it up. The fd goes to QEMU on its reserved number.
#pragma once

#include <string>

namespace qlaunch::launcher {

// The tap's MAC libvirt sets: the guest MAC with the first octet fe (so the bridge never
// takes the guest's address as its own).
std::string TapMac(const std::string& guest_mac);

}  // namespace qlaunch::launcher
