// qlaunch@.service, the systemd template unit that runs `qlaunch run NAME` for a defined domain
// (packaging/qlaunch@.service): its instance names, whether systemd is this host's init, and the
// enabling of one instance (`qlaunch autostart`).
#pragma once

#include <string>

namespace qlaunch::launcher {

// The instance name systemd knows a domain by, as `systemd-escape` makes it: the unit's %I gives
// the name back ("vm-1" -> "vm\x2d1"). "qlaunch@" + it + ".service" is the unit.
std::string UnitInstance(const std::string& domain_name);
std::string UnitName(const std::string& domain_name);

// True when systemd is PID 1 here (sd_booted(3): /run/systemd/system exists).
bool SystemdIsInit();
// What PID 1 is ("systemd", "init", "sh", ...), for messages.
std::string InitName();

// `systemctl enable` or `disable` of the domain's unit; throws std::runtime_error with systemctl's
// status when it fails.
void SetUnitEnabled(const std::string& domain_name, bool on);

}  // namespace qlaunch::launcher
