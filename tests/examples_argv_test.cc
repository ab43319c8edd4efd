// Every shipped example: its argv, planned on the fixture host shaped like a one-node machine,
// is pinned in tests/golden/<example>.<qemu>.argv (one argument per line; regenerate with
// QLAUNCH_UPDATE_GOLDEN=1 and review the diff), and the argv planned on this real host for the
// real QEMU 7.2 (JSON -object) and 5.2 (key=value) is accepted by that QEMU: started paused,
// it answers qmp_capabilities with status "prelaunch", then quits cleanly.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/parser.h"
#include "domain/validate.h"
#include "launcher/host/qemu_spawn.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps_probe.h"
#include "qemu_cmd/planner.h"
#include "qemu_cmd/qmp_client.h"
#include "support/hugepages.h"
#include "support/launch_env.h"

namespace qlaunch {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const fs::path kSource = QLAUNCH_SOURCE_DIR;

std::vector<std::string> Examples() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kSource / "examples"))
    if (e.path().extension() == ".xml") out.push_back(e.path().stem());
  std::sort(out.begin(), out.end());
  return out;
}

domain::DomainDef LoadExample(const std::string& name) {
  domain::DomainDef def = domain::ParseDomainFile(kSource / "examples" / (name + ".xml"));
  EXPECT_TRUE(def.warnings.empty()) << "examples use only what qlaunch understands: "
                                    << DiagnosticError(def.warnings).what();
  auto problems = domain::ValidateDomain(def);
  EXPECT_FALSE(HasErrors(problems)) << DiagnosticError(problems).what();
  return def;
}

qemu::QemuCaps FixtureCaps(const std::string& which) {
  std::ifstream in(kSource / "tests/fixtures/caps" / (which + ".json"));
  return nlohmann::json::parse(in).get<qemu::QemuCaps>();
}

std::string Lines(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += a + "\n";
  return s;
}

TEST(Examples, ThereAreExamples) { EXPECT_GE(Examples().size(), 4u); }

class ExampleGolden : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(ExampleGolden, ArgvMatchesGoldenFile) {
  auto [example, qemu] = GetParam();
  domain::DomainDef def = LoadExample(example);
  numa::ReadOptions ro;
  ro.sysfs_root = kSource / "tests/fixtures/hosts/single-node";
  numa::HostTopology host = numa::ReadHostTopology(ro);
  qemu::PlanOptions opts;
  opts.qmp_socket = "/run/qlaunch/" + def.name + "/qmp.sock";
  opts.memory_backing_dir = "/run/qlaunch/" + def.name + "/ram";
  std::string got = Lines(qemu::PlanLaunch(def, host, FixtureCaps(qemu), opts).argv);

  fs::path golden = kSource / "tests/golden" / (example + "." + qemu + ".argv");
  const char* update = std::getenv("QLAUNCH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden) << got;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << golden << " is missing; run with QLAUNCH_UPDATE_GOLDEN=1 and review it";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << "argv of " << example << " for " << qemu << " changed";
}

INSTANTIATE_TEST_SUITE_P(All, ExampleGolden,
                         ::testing::Combine(::testing::ValuesIn(Examples()), ::testing::Values("qemu-7.2", "qemu-5.2")),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// The real thing: this host, the real QEMU, its real capabilities.
class ExampleAccepted : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(ExampleAccepted, RealQemuStartsPausedAndQuits) {
  auto [example, binary] = GetParam();
  std::string why = testing::CheckQemuVersion(binary, binary == testing::kQemu52 ? "5.2" : "7.2");
  if (!why.empty()) GTEST_SKIP() << why << " (scripts/setup installs it)";
  if (getuid() != 0) GTEST_SKIP() << "needs root to size the hugepage pool";

  fs::path tmp = fs::temp_directory_path() / ("qlaunch-example-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "channel");  // where the argv puts the sockets of channels without a path
  domain::DomainDef def = LoadExample(example);
  if (def.type == "kvm" && !testing::KvmWorks()) def.type = "qemu";  // not a test of the accelerator
  numa::HostTopology host = numa::ReadHostTopology({});
  qemu::ProbeOptions po;
  po.cache_dir = tmp / "cache";
  qemu::QemuCaps caps = qemu::ProbeCaps(binary, po);
  qemu::PlanOptions opts;
  opts.prealloc = qemu::PreallocMode::kQemu;  // the launcher path is covered by tests/launch_*
  opts.qmp_socket = (tmp / "qmp.sock").string();
  opts.memory_backing_dir = (tmp / "ram").string();
  qemu::LaunchPlan plan = qemu::PlanLaunch(def, host, caps, opts);
  EXPECT_EQ(plan.argv.back().rfind("on,obsolete=deny", 0), 0u) << "always sandboxed";

  uint64_t pages = 0;
  for (const auto& need : plan.pool_needs) pages += need.pages;
  auto pool = testing::HugepagePool::AtLeast(pages);
  ASSERT_TRUE(pool.ok()) << pool.error();
  std::vector<fs::path> made;
  for (const auto& b : plan.backends)
    if (b.type == qemu::BackendType::kFile && !b.mem_path.empty() && !b.mem_path.starts_with("/proc/")) {
      fs::create_directories(b.mem_path);
      made.push_back(b.mem_path);
    }

  launcher::SpawnSpec spec;
  spec.argv = plan.argv;
  spec.argv[0] = binary;
  spec.log_file = tmp / "qemu.log";
  auto qemu = launcher::QemuProcess::Spawn(spec);
  try {
    auto qmp = qemu::QmpClient::Connect(opts.qmp_socket, 60s);
    qmp->Execute("qmp_capabilities", nullptr, 120s);
    EXPECT_EQ(qmp->Execute("query-status")["status"], "prelaunch");
    // Every backend QEMU preallocates has its thread-context while paused.
    for (const auto& c : plan.contexts)
      EXPECT_NO_THROW(qmp->Execute("qom-get", {{"path", "/objects/" + c.id}, {"property", "type"}})) << c.id;
    qmp->Execute("quit");
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\nQEMU log:\n" << launcher::LogTail(spec.log_file);
  }
  std::optional<std::string> exit;
  for (int i = 0; i < 200 && !(exit = qemu->ExitDescription()); ++i) usleep(50 * 1000);
  EXPECT_EQ(exit.value_or("still running"), "exited with status 0") << launcher::LogTail(spec.log_file);
  qemu->Kill();
  for (const auto& d : made) fs::remove_all(d);
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(All, ExampleAccepted,
                         ::testing::Combine(::testing::ValuesIn(Examples()),
                                            ::testing::Values(testing::kQemu72, testing::kQemu52)),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" +
                                           (std::get<1>(info.param) == testing::kQemu52 ? "qemu52" : "qemu72");
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace qlaunch
