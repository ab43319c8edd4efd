#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "domain/parser.h"
#include "launcher/host/device_host.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FirmwareHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qlaunch-fw-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "VARS.fd") << "template vars";
    user_.user = "self";
    user_.uid = ::getuid();
    user_.gid = ::getgid();
  }
  void TearDown() override { fs::remove_all(dir_); }

  domain::DomainDef Def(const std::string& nvram) {
    std::string xml =
        "<domain type='qemu'><name>fw</name><memory>131072</memory><os><type machine='q35'>hvm</type>"
        "<loader readonly='yes' type='pflash'>/usr/share/OVMF/OVMF_CODE_4M.fd</loader><nvram template='" +
        (dir_ / "VARS.fd").string() + "'>" + nvram + "</nvram></os><features><acpi/></features></domain>";
    return domain::ParseDomainXml(xml, "fw.xml", {});
  }

  fs::path dir_;
  QemuUser user_;
};

TEST_F(FirmwareHostTest, CopiesTheTemplateOnceAndUndoesOnlyItsOwnCopy) {
  const fs::path vars = dir_ / "fw_VARS.fd";
  domain::DomainDef def = Def(vars.string());
  DeviceHostContext ctx{&def, dir_ / "state", dir_, &user_};
  {
    auto part = MakeFirmwareHost();
    qemu::DeviceResources res;
    FdNumbers fds;
    part->Plan(ctx, &res, &fds);
    EXPECT_EQ(res.nvram_path, vars.string());
    EXPECT_FALSE(fs::exists(vars));  // Plan changes nothing
    part->Create(ctx, [](int, int) {});
    EXPECT_EQ(Read(vars), "template vars");
    EXPECT_EQ(fs::status(vars).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    part->Undo();  // the start failed: the copy goes
    EXPECT_FALSE(fs::exists(vars));
  }
  {
    std::ofstream(vars) << "the guest's own vars";
    auto part = MakeFirmwareHost();
    qemu::DeviceResources res;
    FdNumbers fds;
    part->Plan(ctx, &res, &fds);
    part->Create(ctx, [](int, int) {});
    part->Undo();  // kept: this start did not make it
    EXPECT_EQ(Read(vars), "the guest's own vars");
  }
}

TEST_F(FirmwareHostTest, RefusesWhatItCannotCopy) {
  domain::DomainDef def = Def((dir_ / "missing-dir" / "v.fd").string());
  DeviceHostContext ctx{&def, dir_ / "state", dir_, &user_};
  auto part = MakeFirmwareHost();
  qemu::DeviceResources res;
  FdNumbers fds;
  EXPECT_THROW(part->Plan(ctx, &res, &fds), DiagnosticError);
  fs::remove(dir_ / "VARS.fd");
  domain::DomainDef def2 = Def((dir_ / "v.fd").string());
  DeviceHostContext ctx2{&def2, dir_ / "state", dir_, &user_};
  auto part2 = MakeFirmwareHost();
  EXPECT_THROW(part2->Plan(ctx2, &res, &fds), DiagnosticError);  // no template
}

TEST_F(FirmwareHostTest, NothingWithoutPflashVars) {
  domain::DomainDef def = domain::ParseDomainXml(
      "<domain type='qemu'><name>fw</name><memory>131072</memory><os><type machine='q35'>hvm</type></os></domain>",
      "fw.xml", {});
  DeviceHostContext ctx{&def, dir_ / "state", dir_, &user_};
  auto part = MakeFirmwareHost();
  qemu::DeviceResources res;
  FdNumbers fds;
  part->Plan(ctx, &res, &fds);
  EXPECT_EQ(res.nvram_path, "");
}

}  // namespace
}  // namespace qlaunch::launcher
