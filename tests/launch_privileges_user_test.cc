// Which user QEMU runs as (--user, <seclabel>, root only when named), and what others cannot reach.
#include <cstdlib>
#include <fstream>

#include "support/hardware.h"
#include "support/privileges_env.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(LaunchPrivilegesTest, AKvmDomainWhoseUserCannotOpenDevKvmIsRefusedBeforeAnythingIsMade) {
  QLAUNCH_SKIP_WITHOUT_HARDWARE("kvm");
  fs::path image = Image("kvm.img");
  std::string xml_text = Slurp(DiskXml("priv-kvm", image, false));
  xml_text.replace(xml_text.find("type='qemu'"), 11, "type='kvm'");
  const fs::path xml = tmp() / "priv-kvm-kvm.xml";
  std::ofstream(xml) << xml_text;
  // nobody is not in the group that owns /dev/kvm: the pre-flight opens it as nobody would.
  RunResult r = Qlaunch({"start", "--user", "nobody:nogroup", xml.string()});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("type='kvm': the QEMU user nobody cannot open /dev/kvm (Permission denied)"),
            std::string::npos)
      << r.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");
  ExpectNothingLeft("priv-kvm", HugepagesFree());
}

TEST_F(LaunchPrivilegesTest, AnotherUserCannotReachTheQmpSocketOrTheStateDir) {
  pid_t pid = Start(DiskXml("priv-qmp", Image("q.img"), false));
  ASSERT_GT(pid, 0);
  const fs::path dir = DomainStateDir("priv-qmp");
  auto as_nobody = [](const std::string& cmd) {
    std::string full = "setpriv --reuid=nobody --regid=nogroup --clear-groups -- " + cmd + " >/dev/null 2>&1";
    return std::system(full.c_str());
  };
  ASSERT_EQ(as_nobody("true"), 0) << "setpriv cannot switch to nobody here";
  EXPECT_NE(as_nobody("cat " + (dir / "pid").string()), 0) << "nobody read the state dir";
  EXPECT_NE(as_nobody("ls " + dir.string()), 0) << "nobody listed the state dir";
  const std::string connect = "python3 -c \"import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\" " +
                              (dir / "qmp.sock").string();
  EXPECT_NE(as_nobody(connect), 0) << "nobody connected to QMP";
  EXPECT_EQ(std::system((connect + " >/dev/null 2>&1").c_str()), 0) << "root cannot connect: the check is broken";
  EXPECT_EQ(Qlaunch({"destroy", "priv-qmp"}).exit_code, 0);
}

TEST_F(LaunchPrivilegesTest, UserFlagSeclabelAndExplicitRoot) {
  const fs::path image = Image("who.img");
  // --user names another unprivileged user.
  pid_t pid = Start(DiskXml("priv-user", image, false), {"--user", "nobody:nogroup"});
  ASSERT_GT(pid, 0);
  EXPECT_EQ(ProcStatus(pid)["Uid"], "65534\t65534\t65534\t65534");
  EXPECT_EQ(ProcStatus(pid)["CapEff"], "0000000000000000");
  EXPECT_EQ(Owner(image), "nobody:nogroup 0600");
  EXPECT_EQ(Qlaunch({"destroy", "priv-user"}).exit_code, 0);
  EXPECT_EQ(Owner(image), "root:root 0600");

  // The domain's DAC label, and relabel='no' leaves the image alone (so QEMU cannot open it).
  pid = Start(DiskXml("priv-label", image, false,
                      "  <seclabel type='static' model='dac' relabel='yes'><label>nobody:nogroup</label></seclabel>\n"));
  ASSERT_GT(pid, 0);
  EXPECT_EQ(ProcStatus(pid)["Uid"], "65534\t65534\t65534\t65534");
  EXPECT_EQ(Qlaunch({"destroy", "priv-label"}).exit_code, 0);
  const std::string norelabel = DiskXml(
      "priv-norelabel", image, false,
      "  <seclabel type='static' model='dac' relabel='no'><label>nobody:nogroup</label></seclabel>\n");
  RunResult refused = Qlaunch({"start", norelabel});
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_NE(refused.err.find("<disk>: the QEMU user nobody cannot open " + image.string()), std::string::npos)
      << refused.Describe();
  EXPECT_EQ(Owner(image), "root:root 0600");

  // Root only when named, with a warning; the image is not relabeled for root.
  RunResult root = Qlaunch({"start", "--json", "--user", "root", DiskXml("priv-root", image, false)});
  ASSERT_EQ(root.exit_code, 0) << root.Describe();
  EXPECT_NE(root.err.find("warning: QEMU runs as root with every capability (--user)"), std::string::npos)
      << root.Describe();
  pid = nlohmann::json::parse(root.out).at("pid").get<pid_t>();
  EXPECT_EQ(ProcStatus(pid)["Uid"], "0\t0\t0\t0");
  EXPECT_EQ(Qlaunch({"destroy", "priv-root"}).exit_code, 0);

  // A user that does not exist is named in the error; nothing is started.
  RunResult missing = Qlaunch({"start", "--user", "no-such-user-q", DiskXml("priv-missing", image, false)});
  EXPECT_EQ(missing.exit_code, 1) << missing.Describe();
  EXPECT_NE(missing.err.find("--user no-such-user-q: no such user 'no-such-user-q'"), std::string::npos)
      << missing.Describe();
  ExpectNothingLeft("priv-missing", HugepagesFree());
}

}  // namespace
}  // namespace qlaunch::testing
