// qlaunch's version: CMake's project() version, plus the git commit when built from a checkout
// ("0.1.0 (git 1a2b3c4d5e6f)"). Defined in a file generated at build time
// (cmake/write_version.cmake), so the commit is the one built, not the one configured.
#pragma once

namespace qlaunch::launcher {

const char* VersionString();

}  // namespace qlaunch::launcher
