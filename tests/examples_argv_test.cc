// Every shipped example: its argv, planned on the fixture host shaped like a one-node machine,
// is pinned in tests/golden/<example>.<qemu>.argv (one argument per line; regenerate with
// QLAUNCH_UPDATE_GOLDEN=1, which writes the files and skips every case, and review the diff;
// scripts/test refuses the variable under CI). Each pinned argv also runs: started paused by the
// QEMU it names (7.2 and 5.2), with only what is host-specific replaced (the state directory and
// the fd numbers of the launcher's memfds), it answers qmp_capabilities with status "prelaunch"
// and quits cleanly. And the argv planned on this real host for the real QEMU 7.2 (JSON -object)
// and 5.2 (key=value) is accepted by that QEMU the same way.
#include <linux/memfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
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
#include "support/hardware.h"
#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/gtest_name.h"
#include "support/build_paths.h"

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

// Starts `argv` (argv[0]: the QEMU binary) with `fds` inherited, expects it to answer QMP on
// `qmp_socket` paused ("prelaunch") with every context in `contexts` existing, then to quit with
// status 0. Kills it whatever happens.
void ExpectStartsPausedAndQuits(const std::vector<std::string>& argv, const std::string& qmp_socket,
                                const fs::path& log, const std::vector<std::string>& contexts = {},
                                const std::vector<int>& fds = {}) {
  launcher::SpawnSpec spec;
  spec.argv = argv;
  spec.log_file = log;
  spec.inherit_fds = fds;
  auto qemu = launcher::QemuProcess::Spawn(spec);
  try {
    auto qmp = qemu::QmpClient::Connect(qmp_socket, 60s);
    qmp->Execute("qmp_capabilities", nullptr, 120s);
    EXPECT_EQ(qmp->Execute("query-status")["status"], "prelaunch");
    // Every backend QEMU preallocates has its thread-context while paused.
    for (const auto& id : contexts)
      EXPECT_NO_THROW(qmp->Execute("qom-get", {{"path", "/objects/" + id}, {"property", "type"}})) << id;
    qmp->Execute("quit");
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\nQEMU log:\n" << launcher::LogTail(log);
  }
  std::optional<std::string> exit;
  for (int i = 0; i < 200 && !(exit = qemu->ExitDescription()); ++i) usleep(50 * 1000);
  EXPECT_EQ(exit.value_or("still running"), "exited with status 0") << launcher::LogTail(log);
  qemu->Kill();
}

TEST(Examples, ThereAreExamples) { EXPECT_GE(Examples().size(), 4u); }

class ExampleGolden : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// The plan a golden file pins: the example on the one-node fixture host, for fixture caps
// `qemu` ("qemu-7.2"), with the state directory `qlaunch start` would use.
qemu::LaunchPlan FixturePlan(const std::string& example, const std::string& qemu) {
  domain::DomainDef def = LoadExample(example);
  numa::ReadOptions ro;
  ro.sysfs_root = kSource / "tests/fixtures/hosts/single-node";
  numa::HostTopology host = numa::ReadHostTopology(ro);
  qemu::PlanOptions opts;
  opts.qmp_socket = "/run/qlaunch/" + def.name + "/qmp.sock";
  opts.memory_backing_dir = "/run/qlaunch/" + def.name + "/ram";
  return qemu::PlanLaunch(def, host, FixtureCaps(qemu), opts);
}

fs::path GoldenFile(const std::string& example, const std::string& qemu) {
  return kSource / "tests/golden" / (example + "." + qemu + ".argv");
}

TEST_P(ExampleGolden, ArgvMatchesGoldenFile) {
  auto [example, qemu] = GetParam();
  std::string got = Lines(FixturePlan(example, qemu).argv);

  fs::path golden = GoldenFile(example, qemu);
  const char* update = std::getenv("QLAUNCH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden) << got;
    // Never a pass: what was just written is compared with nothing but itself.
    GTEST_SKIP() << "QLAUNCH_UPDATE_GOLDEN=1: wrote " << golden << "; review the diff and run again without it";
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << golden << " is missing; run with QLAUNCH_UPDATE_GOLDEN=1 and review it";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << "argv of " << example << " for " << qemu << " changed";
}


// The pinned argv is a working one: the file's own lines, run by the QEMU its first line names.
// Replaced, because they belong to one host and one start: the state directory
// (/run/qlaunch/NAME/ -> a temporary one) and the launcher's memfds (/proc/self/fd/N -> a memfd
// of the planned size and page size, on a free fd number).
TEST_P(ExampleGolden, GoldenArgvStartsPausedInItsQemu) {
  auto [example, qemu] = GetParam();
  std::ifstream in(GoldenFile(example, qemu));
  ASSERT_TRUE(in) << GoldenFile(example, qemu) << " is missing";
  std::vector<std::string> argv;
  for (std::string line; std::getline(in, line);) argv.push_back(line);
  ASSERT_FALSE(argv.empty());
  const std::string version = qemu.substr(qemu.find('-') + 1);
  ASSERT_EQ(argv[0], version == "5.2" ? testing::kQemu52 : testing::kQemu72) << "the golden file names its QEMU";
  std::string why = testing::CheckQemuVersion(argv[0], version);
  if (!why.empty()) GTEST_SKIP() << why << " (scripts/setup installs it)";
  if (getuid() != 0) GTEST_SKIP() << "needs root to size the hugepage pool";
  if (auto accel = std::find(argv.begin(), argv.end(), "-accel"); accel != argv.end() && accel + 1 != argv.end() &&
                                                                   *(accel + 1) == "kvm")
    QLAUNCH_SKIP_WITHOUT_HARDWARE("kvm");  // a type='kvm' example's pinned argv runs where KVM does

  const qemu::LaunchPlan plan = FixturePlan(example, qemu);
  ASSERT_EQ(Lines(plan.argv), Lines(argv)) << "the golden file is stale (ArgvMatchesGoldenFile says how)";
  uint64_t pages = 0, page_bytes = 0;
  for (const auto& need : plan.pool_needs) {
    pages += need.pages;
    if (page_bytes) {
      ASSERT_EQ(need.page_bytes, page_bytes) << "one pool size per example";
    }
    page_bytes = need.page_bytes;
  }
  auto pool = testing::HugepagePool::AtLeast(pages, page_bytes);
  ASSERT_TRUE(pool.ok()) << pool.error();

  fs::path tmp = fs::temp_directory_path() / ("qlaunch-golden-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "channel");
  const std::string state = "/run/qlaunch/" + plan.name + "/";
  // The launcher's memfds, each on a free number, and the paths that name them.
  std::vector<const qemu::MemoryBackend*> memfds;
  for (const auto& b : plan.backends)
    if (b.launcher_fd >= 0) memfds.push_back(&b);
  launcher::FdReservation reserved;
  std::map<std::string, std::string> fd_paths;
  if (!memfds.empty()) {
    const int first = launcher::FreeFdBlock(3, static_cast<int>(memfds.size()));
    reserved = launcher::FdReservation(first, static_cast<int>(memfds.size()));
    for (size_t i = 0; i < memfds.size(); ++i) {
      const qemu::MemoryBackend& b = *memfds[i];
      unsigned flags = MFD_CLOEXEC;
      if (b.page_size_bytes > 4096) flags |= MFD_HUGETLB | (__builtin_ctzll(b.page_size_bytes) << MFD_HUGE_SHIFT);
      int fd = memfd_create(b.id.c_str(), flags);
      ASSERT_GE(fd, 0) << "memfd_create: " << strerror(errno);
      ASSERT_EQ(ftruncate(fd, static_cast<off_t>(b.size_bytes)), 0) << strerror(errno);
      reserved.Place(first + static_cast<int>(i), fd);
      close(fd);
      fd_paths[b.mem_path] = "/proc/self/fd/" + std::to_string(first + static_cast<int>(i));
    }
  }
  for (std::string& a : argv) {
    for (size_t at; (at = a.find(state)) != std::string::npos;) a.replace(at, state.size(), tmp.string() + "/");
    for (const auto& [from, to] : fd_paths)
      for (const std::string end : {"\"", ","}) {
        if (size_t at = a.find(from + end); at != std::string::npos) a.replace(at, from.size(), to);
      }
  }
  std::vector<fs::path> made;  // hugetlbfs directories of file backends QEMU creates its files in
  for (const auto& b : plan.backends)
    if (b.type == qemu::BackendType::kFile && b.launcher_fd < 0 && !fs::exists(b.mem_path)) {
      fs::create_directories(b.mem_path);
      made.push_back(b.mem_path);
    }

  std::vector<std::string> contexts;
  for (const auto& c : plan.contexts) contexts.push_back(c.id);
  ExpectStartsPausedAndQuits(argv, (tmp / "qmp.sock").string(), tmp / "qemu.log", contexts, reserved.fds());
  reserved.Close();
  for (const auto& d : made) fs::remove_all(d);
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(All, ExampleGolden,
                         ::testing::Combine(::testing::ValuesIn(Examples()), ::testing::Values("qemu-7.2", "qemu-5.2")),
                         [](const auto& info) {
                           return testing::GtestName(std::get<0>(info.param) + "_" + std::get<1>(info.param));
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

  std::vector<std::string> argv = plan.argv;
  argv[0] = binary;
  std::vector<std::string> contexts;
  for (const auto& c : plan.contexts) contexts.push_back(c.id);
  ExpectStartsPausedAndQuits(argv, opts.qmp_socket, tmp / "qemu.log", contexts);
  for (const auto& d : made) fs::remove_all(d);
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(All, ExampleAccepted,
                         ::testing::Combine(::testing::ValuesIn(Examples()),
                                            ::testing::Values(testing::kQemu72, testing::kQemu52)),
                         [](const auto& info) {
                           return testing::GtestName(std::get<0>(info.param) + "_" +
                                            (std::get<1>(info.param) == testing::kQemu52 ? "qemu52" : "qemu72"));
                         });

}  // namespace
}  // namespace qlaunch
