#include "launcher/cli/cli.h"

int main(int argc, char** argv) { return qlaunch::launcher::RunCli(argc, argv); }
