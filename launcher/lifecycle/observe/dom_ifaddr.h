// The rows of `qlaunch domifaddr`, as libvirt 9.0's `virsh domifaddr` builds and prints them.
// Pure: from the guest agent's guest-network-get-interfaces reply (--source agent) or from the
// domain's user-network NICs (--source lease), and the table virsh prints.
//
// --source lease: libvirt reads the DHCP leases of its own networks (dnsmasq), so only
// <interface type='network'> has any. qlaunch has no libvirt networks; its DHCP servers are
// QEMU's user networks (slirp), which report no leases (QEMU 7.2 has no QMP or HMP command for
// them; `info usernet` lists sockets only). Each user NIC has its own slirp network (qlaunch
// passes -netdev user without net= or dhcpstart=), whose DHCP server gives its one client, the
// guest's NIC, the first address of its pool: 10.0.2.15/24. So lease rows are that address for
// each user NIC, marked as what QEMU's DHCP server hands out, not as a lease it reported.
// Other NICs (bridge, ethernet) are left out, as libvirt leaves out NICs not on its networks
// (libvirt 9.0 prints an empty table for a domain with user NICs only; so does qlaunch for a
// domain without user NICs, with a note on stderr naming --source agent).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace qlaunch::launcher {

struct IfAddress {
  std::string protocol;  // "ipv4", "ipv6"
  std::string address;   // "10.0.2.15"
  unsigned prefix = 0;
};

struct IfAddrRow {
  std::string name;  // the guest's interface name (agent), the tap or "-" (lease)
  std::string mac;   // "" when unknown
  std::vector<IfAddress> addresses;
};

// guest-network-get-interfaces' return: one row per interface, aliases ("eth0:1") merged into
// their interface as libvirt merges them. Throws std::runtime_error naming what is malformed.
std::vector<IfAddrRow> AgentInterfaces(const nlohmann::json& reply);

// The first DHCP address of QEMU's default user network (10.0.2.15/24) for each user NIC.
struct LeaseNic {
  std::string type, mac, tap;
};
std::vector<IfAddrRow> UserNetworkLeases(const std::vector<LeaseNic>& nics);
std::vector<LeaseNic> LeaseNics(const std::string& live_xml, const std::string& file);

// As virsh prints it: " Name       MAC address          Protocol     Address", 79 dashes, then
// one line per address (the interface's name and MAC on its first only, unless full), "N/A" for
// an interface without addresses, then an empty line.
std::string IfAddrTable(const std::vector<IfAddrRow>& rows, bool full = false);
// [{"name","mac" (null when unknown),"addresses":[{"protocol","address","prefix"}]}]
nlohmann::json ToJson(const std::vector<IfAddrRow>& rows);

}  // namespace qlaunch::launcher
