// <graphics>, <video>, <input>, <sound>, <redirdev> (parsed by domain/parse_graphics.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/device_address.h"

namespace qlaunch::domain {

struct Graphics {
  std::string type;          // vnc | spice
  // The fixed port; unset with autoport (chosen at start: the first free one from 5900), and
  // unset for a spice without port and autoport (no TCP port: libvirt's port=0).
  std::optional<int> port;
  bool autoport = false;
  bool listen_none = false;  // <listen type='none'/>: no network listener
  std::string listen;        // <listen type='address' address=...> or listen=; "" = 127.0.0.1
  std::string image_compression;  // spice <image compression=...> ("" = QEMU's default)
  int line = 0;
};

struct Video {
  std::string model;         // vga | cirrus | virtio | qxl | bochs | none
  // KiB, as the XML gives them (unset: libvirt's defaults, applied by the planner).
  std::optional<unsigned> vram, ram, vgamem, vram64;
  std::optional<unsigned> heads;
  bool primary = false;      // primary='yes' (the parser puts that video first)
  DeviceAddress address;
  int line = 0;
};

struct Input {
  std::string type;          // tablet | mouse | keyboard
  std::string bus;           // usb | ps2 | virtio (default: usb for a tablet, else ps2)
  DeviceAddress address;
  int line = 0;
};

struct Sound {
  std::string model;                // ich9 | ich6 | ac97
  std::vector<std::string> codecs;  // <codec type='duplex|micro|output'> (none: one duplex)
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
