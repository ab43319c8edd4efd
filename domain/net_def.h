// <interface>: user, ethernet, bridge (parsed by domain/parse_net.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "domain/device_address.h"

namespace qlaunch::domain {

// libvirt 9.0's NIC model on x86 when <model> is absent (virt-install writes virtio).
inline constexpr const char* kDefaultNetModel = "rtl8139";

struct Interface {
  std::string type;          // user | ethernet | bridge (network: refused with the alternatives)
  std::string mac;           // "aa:bb:cc:dd:ee:ff" (normalized), "" when the XML has none (the planner derives one)
  int mac_line = 0;
  std::string model = kDefaultNetModel;  // virtio | e1000 | e1000e | rtl8139
  std::string source_bridge; // bridge: <source bridge=...>
  std::string target_dev;    // <target dev=...> (tap name; "" = the kernel names it vnetN); a
                             // name starting with "vnet" is dropped as libvirt does (auto-generated)
  int target_line = 0;
  bool target_managed = true;  // ethernet <target managed='no'>: the tap exists, open it
  bool link_up = true;       // <link state='down'/>
  std::optional<unsigned> boot_order;
  DeviceAddress address;
  int line = 0;
};

// "52:54:0:1:2:3" -> "52:54:00:01:02:03" (libvirt's virMacAddrParse: six 1-2 digit hex
// numbers separated by ':'); nullopt when it is not a MAC.
std::optional<std::string> NormalizeMac(std::string_view text);
// True for a multicast (and broadcast) MAC: the low bit of the first octet.
bool IsMulticastMac(const std::string& normalized);
// Why `name` cannot be a network interface name ("" when it can): at most 15 bytes, no '/',
// no whitespace, no ':' , not "." or "..", not empty.
std::string InvalidIfnameReason(std::string_view name);

}  // namespace qlaunch::domain
