// The LaunchPrivilegesTest fixture: root-owned images, one-disk domains, owners (privileges_env.h).
#include "support/privileges_env.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "qemu_cmd/qmp_client.h"

namespace qlaunch::testing {

namespace fs = std::filesystem;

void LaunchPrivilegesTest::SetUp() {
  LaunchTest::SetUp();
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: QEMU's user is only switched by a root qlaunch";
  if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
  ASSERT_NE(::getpwnam("qlaunch-qemu"), nullptr) << "scripts/setup creates the qlaunch-qemu user";
  images_ = tmp() / "images";
  fs::create_directories(images_);
  fs::permissions(images_, fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
}

fs::path LaunchPrivilegesTest::Image(const std::string& name, mode_t mode, const fs::path& dir) {
  fs::path p = (dir.empty() ? images_ : dir) / name;
  std::ofstream(p).close();
  fs::resize_file(p, 1 << 20);
  ::chown(p.c_str(), 0, 0);
  ::chmod(p.c_str(), mode);
  return p;
}

std::string LaunchPrivilegesTest::DiskXml(const std::string& name, const fs::path& image, bool readonly,
                                          const std::string& extra) {
  std::string xml = "<domain type='qemu'>\n  <name>" + name + "</name>\n  <memory unit='MiB'>64</memory>\n"
                    "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n" + extra +
                    "  <devices>\n    <emulator>" + kQemu72 + "</emulator>\n"
                    "    <disk type='file' device='disk'>\n      <driver name='qemu' type='raw'/>\n"
                    "      <source file='" + image.string() + "'/>\n      <target dev='vda' bus='virtio'/>\n" +
                    (readonly ? "      <readonly/>\n" : "") + "    </disk>\n    <memballoon model='none'/>\n"
                    "  </devices>\n</domain>\n";
  fs::path f = tmp() / (name + ".xml");
  std::ofstream(f) << xml;
  return f.string();
}

pid_t LaunchPrivilegesTest::Start(const std::string& xml, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"start", "--json"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(xml);
  RunResult r = Qlaunch(args);
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  if (r.exit_code != 0) return 0;
  return nlohmann::json::parse(r.out).at("pid").get<pid_t>();
}

std::string LaunchPrivilegesTest::Owner(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "missing";
  const passwd* pw = ::getpwuid(st.st_uid);
  const group* gr = ::getgrgid(st.st_gid);
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
  return (pw ? std::string(pw->pw_name) : "+" + std::to_string(st.st_uid)) + ":" +
         (gr ? std::string(gr->gr_name) : "+" + std::to_string(st.st_gid)) + " " + mode;
}

std::string LaunchPrivilegesTest::Leased(pid_t pid) {
  const std::string id = QemuIdOf(pid);
  return "+" + id + ":+" + id;
}

nlohmann::json LaunchPrivilegesTest::QueryBlock(const std::string& name) {
  auto qmp = qemu::QmpClient::Connect((DomainStateDir(name) / "qmp.sock").string(), std::chrono::seconds(10));
  qmp->Execute("qmp_capabilities", nullptr, std::chrono::seconds(10));
  return qmp->Execute("query-block", nullptr, std::chrono::seconds(10));
}

}  // namespace qlaunch::testing
