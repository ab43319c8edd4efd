// RunCli: qlaunch's command line (CLI11). Exit codes: 0 ok, 1 error, 2 usage.
#pragma once

namespace qlaunch::launcher {

int RunCli(int argc, char** argv);

}  // namespace qlaunch::launcher
