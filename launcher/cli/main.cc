#include <cstdio>
#include <cstring>

#include "launcher/cli/cli.h"
#include "launcher/cli/version.h"

int main(int argc, char** argv) {
  // `qlaunch --version` alone answers without building the CLI tree of every command (what CLI11
  // would print for it, byte for byte): scripts and package managers call it often.
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("qlaunch %s\n", qlaunch::launcher::VersionString());
    return 0;
  }
  return qlaunch::launcher::RunCli(argc, argv);
}
