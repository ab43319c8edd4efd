// `qlaunch capabilities --format gres` and `qlaunch validate --gres` as a user runs them, on a
// fixture host (two nodes, 2 MiB and 1 GiB pools on each) and QEMU 7.2's recorded capabilities:
// the exact lines for slurm.conf and gres.conf, the --gres of a domain, and the refusals.
#include <gtest/gtest.h>

#include <fstream>

#include "support/qlaunch_run.h"
#include "support/temp_dir.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

const std::string kSrc = QLAUNCH_SOURCE_DIR;
const std::string kTwoNode = kSrc + "/tests/fixtures/hosts/two-node";
const std::string kCaps = kSrc + "/tests/fixtures/caps/qemu-7.2.json";

TEST(SlurmGresCli, CapabilitiesPrintsOneGresConfLinePerNodeAndSize) {
  RunResult r = RunQlaunch({"capabilities", "--format", "gres", "--sysfs", kTwoNode, "--node-name", "n7"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  // The fixture has no CPU topology (devices/system/cpu): no Cores= then.
  EXPECT_EQ(r.out,
            "# Hugepages of n7 as a Slurm GRES: the count is in pages of the type's size (qlaunch capabilities "
            "--format gres)\n"
            "# slurm.conf (add Gres= to this node's NodeName line):\n"
            "GresTypes=hugepages\n"
            "NodeName=n7 Gres=hugepages:2M:2048,hugepages:1G:8\n"
            "# gres.conf:\n"
            "NodeName=n7 Name=hugepages Type=2M Count=1024  # host node 0\n"
            "NodeName=n7 Name=hugepages Type=2M Count=1024  # host node 1\n"
            "NodeName=n7 Name=hugepages Type=1G Count=4  # host node 0\n"
            "NodeName=n7 Name=hugepages Type=1G Count=4  # host node 1\n")
      << r.Describe();
}

TEST(SlurmGresCli, CapabilitiesRefusesAHostWithoutPages) {
  TempDir tmp;
  std::filesystem::copy(kTwoNode, tmp.path / "sys", std::filesystem::copy_options::recursive);
  for (const auto& e : std::filesystem::recursive_directory_iterator(tmp.path / "sys"))
    if (e.path().filename() == "nr_hugepages" || e.path().filename() == "free_hugepages")
      std::ofstream(e.path()) << "0\n";
  RunResult r = RunQlaunch({"capabilities", "--format", "gres", "--sysfs", (tmp.path / "sys").string()});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no hugepages to declare to Slurm"), std::string::npos) << r.Describe();
}

TEST(SlurmGresCli, ValidateGresPrintsThePagesTheDomainNeeds) {
  // Two cells of 256 MiB on 2 MiB pages: 256 pages, whatever the host has free.
  RunResult r = RunQlaunch({"validate", "--gres", "--sysfs", kTwoNode, "--caps-file", kCaps,
                            kSrc + "/examples/two-cells-hugepages.xml"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "hugepages:2M:256\n");
  // Without hugepages there is nothing to ask for, and it says so.
  r = RunQlaunch({"validate", "--gres", "--sysfs", kTwoNode, "--caps-file", kCaps, kSrc + "/examples/plain-ram.xml"});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("takes no hugepages: it needs no --gres"), std::string::npos) << r.Describe();
}

}  // namespace
}  // namespace qlaunch::testing
