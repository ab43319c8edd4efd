// <serial>, <console>, <channel> (parsed by domain/parse_chardev.cc).
#pragma once

#include <optional>
#include <string>

#include "domain/device_address.h"

namespace qlaunch::domain {

struct CharDev {
  std::string kind;         // serial | console | channel
  std::string type = "pty"; // pty | file | unix | tcp | null | stdio | spicevmc
  std::string path;         // file/unix source path ("" for a unix channel: under the state dir)
  bool append = false;      // file: <source append='on'>
  std::string mode;         // unix/tcp: bind (server) | connect (client, the default)
  std::string host, service;  // tcp
  std::string protocol;     // tcp: raw (default) | telnet
  std::string target_type;  // serial: isa-serial|pci-serial; console: serial|virtio;
                            // channel: virtio ("" when the XML gives none: the kind's default)
  std::optional<unsigned> target_port;  // serial: the ISA index; console/channel: unused
  std::string target_name;  // channel virtio: org.qemu.guest_agent.0, com.redhat.spice.0, ...
  DeviceAddress address;    // virtio-serial (channels, virtio consoles) or pci (pci-serial)
  int line = 0;
};

}  // namespace qlaunch::domain
