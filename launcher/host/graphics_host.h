// The graphics part of DeviceHostSide (launcher/host/graphics_host.cc), with its port test
// injectable for tests.
#pragma once

#include <functional>
#include <memory>

#include "launcher/host/device_host.h"

namespace qlaunch::launcher {

// True when TCP `port` is free on the host (nothing bound on it at any address).
using PortProbe = std::function<bool(int port)>;
bool TcpPortFree(int port);

std::unique_ptr<DeviceHostPart> MakeGraphicsHost(PortProbe probe);

}  // namespace qlaunch::launcher
