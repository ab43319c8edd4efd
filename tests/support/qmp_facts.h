// What a running QEMU says about its devices, in a form two QEMUs can be compared by: the
// device differential (tests/device_differential_test.cc) asks libvirt's QEMU and qlaunch's
// QEMU the same questions and compares these facts. Each function takes the monitor's answer
// (HMP text, or the JSON "return" value) and leaves out what legitimately differs between two
// launchers (paths of sockets, pty numbers, addresses, node names). The HMP parsers throw
// std::runtime_error on a line that names what they look for but does not match their pattern,
// so a change of the monitor's format cannot turn into an empty list on both sides.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace qlaunch::testing {

// `info qtree`: the type of every device ("dev: TYPE, id ..."), sorted (a multiset).
std::vector<std::string> QtreeDeviceTypes(const std::string& hmp);

// query-block: per device with a medium or a tray, {"file", "format", "ro", "removable"},
// sorted. An empty drive has file "" and format "".
nlohmann::json BlockFacts(const nlohmann::json& reply);

// query-chardev: label -> the backend kind (pty, file, unix, tcp/telnet, null, spicevmc, ...),
// leaving out the monitors (charmonitor, qlaunch's qmp and qmp-events).
nlohmann::json ChardevFacts(const nlohmann::json& reply);

// `info network`: per NIC {"id", "model", "mac", "backend"} (backend: user, tap, ...).
nlohmann::json NetworkFacts(const std::string& hmp);

// `info usb`: per device {"port", "product", "id"}.
nlohmann::json UsbFacts(const std::string& hmp);

// query-vnc / query-spice: {"enabled", "host"} (and the port when enabled).
nlohmann::json DisplayFacts(const nlohmann::json& reply);

// query-memdev: per backend {"id", "size", "share", "prealloc", "policy", "host-nodes"}, by id.
nlohmann::json MemdevFacts(const nlohmann::json& reply);

}  // namespace qlaunch::testing
