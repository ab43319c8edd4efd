// <domain type='kvm'> where this host cannot use KVM: `start` and `validate` refuse it with the
// same words (and start leaves nothing behind), `domxml-to-native` still prints the KVM command
// line the XML asks for, with one note that this host cannot run it. The host without KVM is
// made here with QLAUNCH_KVM_DEVICE (a device that does not exist), so this runs on every
// machine; where KVM is real, the same XML validates, plans without the note and starts.
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "qemu_cmd/planner.h"
#include "support/hardware.h"
#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/build_paths.h"

namespace qlaunch::testing {
namespace {

// Lines of `err` that are diagnostics ("...: error: ..." or "...: warning: ...").
std::vector<std::string> DiagnosticLines(const std::string& err, const std::string& kind) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.find(": " + kind + ": ") != std::string::npos) out.push_back(line);
  return out;
}

class KvmUnusableTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    xml_ = (tmp() / "kvm-guest.xml").string();
    std::ofstream(xml_) << "<domain type='kvm'>\n"
                           "  <name>kvm-guest</name>\n"
                           "  <memory unit='MiB'>128</memory>\n"
                           "  <vcpu>1</vcpu>\n"
                           "  <os><type arch='x86_64' machine='pc'>hvm</type></os>\n"
                           "  <devices><memballoon model='none'/></devices>\n"
                           "</domain>\n";
  }
  std::string xml_;
};

TEST_F(KvmUnusableTest, StartValidateAndDomxmlToNativeAgree) {
  const Env no_kvm = {{"QLAUNCH_KVM_DEVICE", "/nonexistent/kvm"}};
  const std::string refusal =
      xml_ + ":1: error: <domain>: type='kvm' needs KVM, which is not usable on this host (cannot open "
             "/nonexistent/kvm: No such file or directory); use <domain type='qemu'> to run the guest with TCG "
             "(emulation) instead";
  // Free pages are compared after: alone with respect to the tests and soaks that size the pool.
  const HugepagePool lock = HugepagePool::LockOnly();
  const uint64_t free_before = HugepagesFree();

  RunResult started = Qlaunch({"start", "--qemu", kQemu72, xml_}, no_kvm);
  EXPECT_EQ(started.exit_code, 1) << started.Describe();
  EXPECT_EQ(DiagnosticLines(started.err, "error"), std::vector<std::string>{refusal}) << started.Describe();
  ExpectNothingLeft("kvm-guest", free_before);

  RunResult validated = Qlaunch({"validate", "--qemu", kQemu72, xml_}, no_kvm);
  EXPECT_EQ(validated.exit_code, 1) << validated.Describe();
  EXPECT_EQ(DiagnosticLines(validated.err, "error"), std::vector<std::string>{refusal}) << validated.Describe();
  EXPECT_EQ(validated.err.find(qemu::kKvmUnusableNote), std::string::npos)
      << "validate says it twice: " << validated.Describe();

  for (const char* format : {"lines", "json"}) {
    SCOPED_TRACE(format);
    RunResult planned = Qlaunch({"domxml-to-native", "--format", format, "--qemu", kQemu72, xml_}, no_kvm);
    ASSERT_EQ(planned.exit_code, 0) << planned.Describe();
    EXPECT_EQ(DiagnosticLines(planned.err, "warning"),
              std::vector<std::string>{xml_ + ": warning: <domain>: " + qemu::kKvmUnusableNote})
        << planned.Describe();
    EXPECT_TRUE(DiagnosticLines(planned.err, "error").empty()) << planned.Describe();
    std::vector<std::string> argv;
    if (std::string(format) == "json") {
      argv = nlohmann::json::parse(planned.out).at("argv").get<std::vector<std::string>>();
    } else {
      std::istringstream in(planned.out);
      for (std::string a; std::getline(in, a);) argv.push_back(a);
    }
    auto accel = std::find(argv.begin(), argv.end(), "-accel");
    ASSERT_NE(accel, argv.end()) << planned.out;
    ASSERT_NE(accel + 1, argv.end());
    EXPECT_EQ(*(accel + 1), "kvm");
  }
}

// The same code on a host where KVM is real: no note, no refusal, and the guest starts.
TEST_F(KvmUnusableTest, WithKvmTheSameXmlPlansWithoutANoteAndStarts) {
  QLAUNCH_SKIP_WITHOUT_HARDWARE("kvm");
  RunResult validated = Qlaunch({"validate", "--qemu", kQemu72, xml_});
  EXPECT_EQ(validated.exit_code, 0) << validated.Describe();
  RunResult planned = Qlaunch({"domxml-to-native", "--format", "lines", "--qemu", kQemu72, xml_});
  ASSERT_EQ(planned.exit_code, 0) << planned.Describe();
  EXPECT_EQ(planned.err.find(qemu::kKvmUnusableNote), std::string::npos) << planned.Describe();
  EXPECT_NE(planned.out.find("-accel\nkvm\n"), std::string::npos) << planned.out;
  // Free pages are compared after: alone with respect to the tests and soaks that size the pool.
  const HugepagePool lock = HugepagePool::LockOnly();
  const uint64_t free_before = HugepagesFree();
  RunResult started = Qlaunch({"start", "--json", "--qemu", kQemu72, xml_});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  const pid_t pid = nlohmann::json::parse(started.out).at("pid").get<pid_t>();
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string args((std::istreambuf_iterator<char>(cmdline)), {});
  EXPECT_NE(args.find(std::string("-accel") + '\0' + "kvm" + '\0'), std::string::npos);
  ASSERT_EQ(Qlaunch({"destroy", "kvm-guest"}).exit_code, 0);
  ExpectHostClean("kvm-guest", pid, free_before);
}

// What the tests above lean on: hiding kvm makes the helper and qlaunch agree it is missing.
TEST(HardwareHelper, KnowsItsFeaturesAndRefusesOthers) {
  std::vector<std::string> names = HardwareFeatureNames();
  EXPECT_EQ(names, (std::vector<std::string>{"kvm", "hugepages-1G", "cpuset", "numa-nodes", "memlock-raise"}));
  for (const std::string& n : names) {
    std::string why = MissingHardware(n);
    EXPECT_TRUE(why.empty() || why.starts_with("missing hardware: " + n + " (")) << why;
  }
  EXPECT_THROW(MissingHardware("libvirt"), std::invalid_argument);
}

TEST(HardwareHelper, TcgCopyOnlyWhereKvmIsMissing) {
  const std::string src = std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/virtinst/q35-virtio-user-vnc.xml";
  const std::string dir = ::testing::TempDir() + "/qlaunch-tcg-copy";
  const std::string got = WithoutKvmWhereMissing(src, dir);
  if (MissingHardware("kvm").empty()) {
    EXPECT_EQ(got, src);
    return;
  }
  ASSERT_NE(got, src);
  std::ifstream a(src), b(got);
  std::string la, lb;
  int line = 0, changed = 0;
  while (std::getline(a, la)) {
    ASSERT_TRUE(std::getline(b, lb)) << "the copy is shorter, at line " << line;
    ++line;
    if (la == lb) continue;
    ++changed;
    const std::regex kvm(R"(type=(['"])kvm\1)");
    EXPECT_TRUE(std::regex_search(la, kvm)) << la;
    EXPECT_EQ(std::regex_replace(la, kvm, "type='qemu'"), lb);
  }
  EXPECT_FALSE(std::getline(b, lb)) << "the copy is longer";
  EXPECT_EQ(changed, 1);
}

}  // namespace
}  // namespace qlaunch::testing
