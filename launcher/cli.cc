#include "launcher/cli.h"

#include <CLI/CLI.hpp>

namespace qlaunch::launcher {

int RunCli(int argc, char** argv) {
  CLI::App app{"qlaunch: start large hugepage QEMU VMs fast and NUMA-correctly"};
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return 0;
}

}  // namespace qlaunch::launcher
