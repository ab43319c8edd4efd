// <interface>: user, ethernet, bridge (parsed by domain/parse_net.cc).
#pragma once

#include <optional>
#include <string>

#include "domain/device_address.h"

namespace qlaunch::domain {

struct Interface {
  std::string type;          // user | ethernet | bridge (network: refused with the alternatives)
  std::string mac;           // "" when the XML has none (the planner derives one)
  std::string model = "virtio";  // virtio | e1000 | e1000e | rtl8139
  std::string source_bridge; // bridge: <source bridge=...>
  std::string target_dev;    // ethernet: <target dev=...> (tap name; "" = let qlaunch name it)
  bool target_managed = true;  // ethernet <target managed='no'>: the tap exists, open it
  bool link_up = true;       // <link state='down'/>
  std::optional<unsigned> boot_order;
  DeviceAddress address;
  int line = 0;
};

}  // namespace qlaunch::domain
