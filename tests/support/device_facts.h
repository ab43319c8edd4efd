// Asking a running QEMU about its devices through a launcher's monitor verb, and the facts two
// QEMUs are compared by (support/qmp_facts.h): the device differential
// (tests/device_differential_test.cc) and the attach/detach differential
// (tests/attach_device_test.cc) ask libvirt's QEMU and qlaunch's the same questions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/qlaunch_run.h"

namespace qlaunch::testing {

// Asks one QEMU a question: (command, hmp) -> the HMP text, or the JSON "return" value (a QMP
// error comes back as {"error": "..."}).
using Monitor = std::function<std::string(const std::string& command, bool hmp)>;

// `virsh qemu-monitor-command` and `qlaunch qemu-monitor-command` take the same arguments.
Monitor MonitorOf(const std::string& name, std::function<RunResult(const std::vector<std::string>&)> run);

// The "return" of a QMP command without arguments, or {"error": ...}.
nlohmann::json Qmp(const Monitor& ask, const std::string& command);

// The facts (qtree, block, chardev, network, usb, vnc, spice, balloon, vcpus, memdev), and under
// "errors" every question the monitor answered with an error (HMP: "unknown command" or
// "Error: ..."; QMP: an error object), or whose answer a parser could not read.
nlohmann::json DeviceFacts(const Monitor& ask);

}  // namespace qlaunch::testing
