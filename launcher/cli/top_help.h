// `qlaunch --help` (and `qlaunch help`): one line a verb, grouped as virsh groups its commands,
// then the exit statuses, environment and files every command shares. Made from the verb table
// and the reference tables alone, without the CLI tree; `qlaunch VERB --help` has a verb's text.
#pragma once

#include <string>

namespace qlaunch::launcher {

std::string TopHelp();

}  // namespace qlaunch::launcher
