// <graphics>, <video>, <input>, <sound>, <redirdev> (parsed by domain/parse_graphics.cc).
#pragma once

#include <optional>
#include <string>

#include "domain/device_address.h"

namespace qlaunch::domain {

struct Graphics {
  std::string type;          // vnc | spice | none
  std::optional<int> port;   // unset or -1 with autoport: the first free port from 5900
  bool autoport = false;
  std::string listen;        // <listen type='address' address=...> or listen=; "" = 127.0.0.1
  std::string passwd;
  int line = 0;
};

struct Video {
  std::string model;         // vga | cirrus | virtio | qxl | bochs | none
  std::optional<unsigned> vram, heads;
  bool primary = false;
  DeviceAddress address;
  int line = 0;
};

struct Input {
  std::string type;          // tablet | mouse | keyboard
  std::string bus;           // usb | ps2 | virtio
  DeviceAddress address;
  int line = 0;
};

struct Sound {
  std::string model;         // ich9 | ich6 | ac97
  DeviceAddress address;
  int line = 0;
};

struct RedirDev {
  std::string bus = "usb";
  std::string type;          // spicevmc
  DeviceAddress address;
  int line = 0;
};

}  // namespace qlaunch::domain
