#include "launcher/cli/virsh_table.h"

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

// The tables below are what virsh 9.0 prints (`virsh -c test:///default domblklist --details
// test`, `domiflist test`), byte for byte.
TEST(VirshTable, AsVirshPrintsIt) {
  struct Case {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::string want;
  };
  const Case cases[] = {
      {{"Target", "Source"}, {{"vda", "/guest/diskimage1"}},
       " Target   Source\n-----------------------------\n vda      /guest/diskimage1\n\n"},
      {{"Type", "Device", "Target", "Source"}, {{"file", "disk", "vda", "/guest/diskimage1"}},
       " Type   Device   Target   Source\n---------------------------------------------\n"
       " file   disk     vda      /guest/diskimage1\n\n"},
      {{"Interface", "Type", "Source", "Model", "MAC"}, {{"testnet0", "network", "default", "", "aa:bb:cc:dd:ee:ff"}},
       " Interface   Type      Source    Model   MAC\n------------------------------------------------------------\n"
       " testnet0    network   default   -       aa:bb:cc:dd:ee:ff\n\n"},
      // No rows: the header, its dashes, the empty line.
      {{"Target", "Source"}, {}, " Target   Source\n------------------\n\n"},
  };
  for (const Case& c : cases) EXPECT_EQ(VirshTable(c.header, c.rows), c.want);
}

}  // namespace
}  // namespace qlaunch::launcher
