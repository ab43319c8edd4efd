#include "support/launch_env.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "launcher/host/uid_lease.h"
#include "launcher/lifecycle/start/preflight.h"
#include "support/hardware.h"
#include "support/slurp.h"

namespace qlaunch::testing {

namespace fs = std::filesystem;

std::string CheckQemuVersion(const std::string& binary, const std::string& major_minor) {
  if (::access(binary.c_str(), X_OK) != 0) return binary + " is not installed";
  RunningProcess p({binary, "--version"}, {});
  RunResult r = p.Wait(std::chrono::seconds(30));
  if (r.exit_code != 0) return binary + " --version failed: " + r.Describe();
  std::string want = "QEMU emulator version " + major_minor;
  if (r.out.rfind(want, 0) != 0 || (r.out.size() > want.size() && std::isdigit(r.out[want.size()])))
    return binary + " is not QEMU " + major_minor + ": " + r.out.substr(0, r.out.find('\n'));
  return "";
}

std::string SmallDomainXml(const SmallDomain& d) {
  std::string type = d.type.empty() ? (KvmWorks() ? "kvm" : "qemu") : d.type;
  std::ostringstream x;
  x << "<domain type='" << type << "'>\n"
    << "  <name>" << d.name << "</name>\n"
    << "  <memory unit='MiB'>" << d.cells * d.cell_mib << "</memory>\n"
    << "  <memoryBacking>\n"
    << "    <hugepages><page size='" << d.page_mib << "' unit='MiB'/></hugepages>\n"
    << "    <source type='memfd'/>\n"
    << "    <access mode='" << d.access << "'/>\n"
    << "    <allocation mode='immediate'/>\n"
    << "  </memoryBacking>\n"
    << "  <vcpu placement='static'"
    << (d.current_vcpus ? " current='" + std::to_string(d.current_vcpus) + "'" : std::string()) << ">"
    << d.cells * d.vcpus_per_cell << "</vcpu>\n"
    << "  <numatune><memory mode='strict' nodeset='0'/></numatune>\n"
    << "  <os><type arch='x86_64' machine='" << d.machine << "'>hvm</type>" << d.os_extra << "</os>\n"
    << (d.features.empty() ? std::string() : "  <features>" + d.features + "</features>\n")
    << "  <cpu mode='custom'>\n"
    << "    <model>qemu64</model>\n"
    << "    <topology sockets='" << d.cells * d.vcpus_per_cell << "' cores='1' threads='1'/>\n"
    << "    <numa>\n";
  for (unsigned c = 0; c < d.cells; ++c) {
    const unsigned first = c * d.vcpus_per_cell, last = first + d.vcpus_per_cell - 1;
    x << "      <cell id='" << c << "' cpus='" << first
      << (last > first ? "-" + std::to_string(last) : std::string()) << "' memory='" << d.cell_mib
      << "' unit='MiB'/>\n";
  }
  x << "    </numa>\n"
    << "  </cpu>\n"
    << "  <devices>\n";
  if (!d.emulator.empty()) x << "    <emulator>" << d.emulator << "</emulator>\n";
  x << d.devices_extra << "    <memballoon model='none'/>\n"
    << "  </devices>\n"
    << "</domain>\n";
  return x.str();
}

std::string WhyNoHugepageQemu72() {
  if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) return why;
  if (::geteuid() != 0) return "needs root (hugepage pool, QEMU's user)";
  if (DefaultHugepageBytes() != (2u << 20)) return "default hugepages are not 2 MiB";
  return "";
}

bool KvmWorks() { return MissingHardware("kvm").empty(); }

void LaunchTest::SetUp() {
  // QEMU outlives `qlaunch start` (its parent); as subreaper this test adopts it and can reap
  // it, so "gone" below means exited and reaped, not a zombie parked under pid 1.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  char tmpl[] = "/tmp/qlaunch-launch-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  tmp_ = tmpl;
  // As /run is: QEMU's unprivileged user may pass through to the dirs made for it (<state>/.ram).
  fs::permissions(tmp_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::create_directories(tmp_ / "cache");
}

void LaunchTest::TearDown() {
  // Whatever a failed test left running goes: processes on our state dir, and every process this
  // test adopted as subreaper (a QEMU whose QMP is an fd has no state dir path in its argv).
  std::vector<std::pair<fs::path, Env>> roots = {{StateDir(), {}}};
  for (const std::string& host : other_hosts_) roots.emplace_back(OtherStateDir(host), OtherHost(host));
  auto leftovers = [&roots] {
    std::vector<pid_t> pids = LiveChildren();
    for (const auto& [root, env] : roots)
      for (pid_t pid : LivePidsWithCmdline(root.string())) pids.push_back(pid);
    return pids;
  };
  for (pid_t pid : leftovers()) ::kill(pid, SIGKILL);
  for (int i = 0; i < 200 && !leftovers().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  // Their entries are stale now: a list clears them, giving relabeled files and cgroups back.
  std::error_code ec;
  for (const auto& [root, env] : roots)
    if (fs::is_directory(root, ec)) Qlaunch({"list"}, env);
  fs::remove_all(tmp_, ec);
}

Env LaunchTest::BaseEnv() const {
  // Definitions too are the test's own: no test reads or writes the host's /etc/qlaunch.
  return Env{{"QLAUNCH_STATE_DIR", StateDir().string()},
             {"QLAUNCH_CACHE_DIR", (tmp_ / "cache").string()},
             {"QLAUNCH_CONFIG_DIR", (tmp_ / "config").string()}};
}

Env LaunchTest::OtherHost(const std::string& host) {
  if (std::find(other_hosts_.begin(), other_hosts_.end(), host) == other_hosts_.end()) other_hosts_.push_back(host);
  return Env{{"QLAUNCH_STATE_DIR", OtherStateDir(host).string()}};
}

std::string LaunchTest::WriteDomain(const SmallDomain& d) {
  fs::path path = tmp_ / (d.name + ".xml");
  std::ofstream(path) << SmallDomainXml(d);
  return path.string();
}

RunResult LaunchTest::Qlaunch(const std::vector<std::string>& args, const Env& extra,
                              std::chrono::milliseconds timeout) {
  Env env = BaseEnv();
  for (const auto& [k, v] : extra) env[k] = v;
  return RunQlaunch(args, env, timeout);
}

void LaunchTest::ExpectQemuGone(pid_t qemu_pid) {
  EXPECT_TRUE(PidGone(qemu_pid)) << "QEMU pid " << qemu_pid << " still runs";
  // Adopted by us as subreaper: reap it, proving it exited.
  int status = 0;
  pid_t r = ::waitpid(qemu_pid, &status, WNOHANG);
  EXPECT_TRUE(r == qemu_pid || (r < 0 && errno == ECHILD)) << "waitpid " << qemu_pid << " -> " << r;
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(qemu_pid))) << "QEMU pid " << qemu_pid << " still exists";
}

void LaunchTest::ExpectHostClean(const std::string& name, pid_t qemu_pid, uint64_t free_before,
                                 const fs::path& state_dir) {
  if (qemu_pid > 0) ExpectQemuGone(qemu_pid);
  const fs::path dir = (state_dir.empty() ? StateDir() : state_dir) / name;
  EXPECT_EQ(LivePidsWithCmdline(dir.string()), std::vector<pid_t>{}) << "processes still use " << dir;
  EXPECT_EQ(PidsHoldingFd("memfd:qlaunch:" + name + ":"), std::vector<pid_t>{}) << "memfds of " << name << " held";
  EXPECT_EQ(HugepagesFree(), free_before) << "hugepages not returned";
  EXPECT_FALSE(fs::exists(dir)) << dir << " left behind";
}

void LaunchTest::ExpectNothingLeft(const std::string& name, uint64_t free_before) {
  ExpectHostClean(name, 0, free_before);
  EXPECT_EQ(LivePidsWithCmdline(StateDir().string()), std::vector<pid_t>{}) << "processes still use " << StateDir();
  std::vector<std::string> entries;
  std::error_code ec;
  for (fs::directory_iterator it(StateDir(), ec), end; !ec && it != end; it.increment(ec))
    entries.push_back(it->path().filename().string());
  EXPECT_EQ(entries, std::vector<std::string>{}) << "left in " << StateDir();
  EXPECT_EQ(launcher::IdsHeldUnder(tmp_), std::vector<uint32_t>{}) << "uids still leased to domains of " << tmp_;
  std::vector<pid_t> children = LiveChildren();  // a killed one may take a moment to exit
  for (int i = 0; i < 200 && !children.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    children = LiveChildren();
  }
  EXPECT_EQ(children, std::vector<pid_t>{}) << "processes left behind (re-parented to the test)";
}

void LaunchTest::StartListDestroy(const std::string& qemu, const std::vector<std::string>& start_flags,
                                  const std::string& want_prealloc) {
  SmallDomain d;
  const uint64_t pages = d.Bytes() / (2u << 20);
  ASSERT_EQ(DefaultHugepageBytes(), 2u << 20) << "these tests assume 2 MiB default hugepages";
  HugepagePool pool = HugepagePool::AtLeast(pages + 8);
  if (!pool.ok()) GTEST_SKIP() << pool.error();
  const std::string xml = WriteDomain(d);
  const uint64_t free_before = HugepagesFree();

  std::vector<std::string> args = {"start", "--json", "--qemu", qemu};
  args.insert(args.end(), start_flags.begin(), start_flags.end());
  args.push_back(xml);
  RunResult start = Qlaunch(args);
  ASSERT_EQ(start.exit_code, 0) << start.Describe();
  nlohmann::json report = nlohmann::json::parse(start.out);
  EXPECT_EQ(report["name"], d.name);
  EXPECT_EQ(report["prealloc"], want_prealloc) << report.dump();
  ASSERT_TRUE(report["pid"].is_number_integer()) << report.dump();
  const pid_t pid = report["pid"].get<pid_t>();
  // The phases cover the process from exec to the report: they add up to total, and what no
  // phase holds (unaccounted) is under 2 ms.
  double sum = 0;
  for (const char* phase : {"startup", "cli", "parse", "topology", "probe", "plan", "preflight", "pool_lock", "memfd",
                            "spawn", "qmp_ready", "prealloc", "unmap", "cont", "hand_over", "return"}) {
    ASSERT_TRUE(report["timings_ms"][phase].is_number()) << phase << " in " << report.dump();
    EXPECT_GE(report["timings_ms"][phase].get<double>(), 0.0) << phase;
    sum += report["timings_ms"][phase].get<double>();
  }
  EXPECT_GT(report["timings_ms"]["startup"].get<double>(), 0.0) << report.dump();
  const double total = report["timings_ms"]["total"].get<double>();
  EXPECT_NEAR(sum, total, 0.02) << report.dump();
  EXPECT_NEAR(report["timings_ms"]["unaccounted"].get<double>(), total - sum, 0.02) << report.dump();
  EXPECT_LT(std::abs(report["timings_ms"]["unaccounted"].get<double>()), 2.0) << report.dump();
  EXPECT_LE(report["timings_ms"]["running"].get<double>(), total + 0.01) << report.dump();
  EXPECT_LE(report["clock_ns"]["entry"].get<int64_t>(), report["clock_ns"]["end"].get<int64_t>()) << report.dump();
  std::printf("[ timings  ] %s\n", report.dump().c_str());

  // QEMU runs on its own (qlaunch has exited), with its state recorded.
  const fs::path dir = DomainStateDir(d.name);
  EXPECT_FALSE(PidGone(pid));
  EXPECT_EQ(Slurp(dir / "pid"), std::to_string(pid) + "\n");
  EXPECT_EQ(Slurp(dir / "domain.xml"), Slurp(xml));
  EXPECT_TRUE(fs::exists(dir / "qmp.sock"));
  EXPECT_TRUE(fs::exists(dir / "qemu.log"));
  EXPECT_FALSE(fs::exists(dir / "owner"));
  nlohmann::json plan = nlohmann::json::parse(Slurp(dir / "plan.json"));
  EXPECT_TRUE(plan.contains("argv")) << plan.dump();
  // QMP: a socket qlaunch made (root's, 0600, in the 0700 state dir), given to QEMU as an fd.
  std::string cmdline = Slurp("/proc/" + std::to_string(pid) + "/cmdline");
  EXPECT_NE(cmdline.find("socket,id=qmp,fd="), std::string::npos) << cmdline;
  EXPECT_EQ(cmdline.find((dir / "qmp.sock").string()), std::string::npos) << cmdline;
  if (::geteuid() == 0) ExpectUnprivileged(pid);

  // Exactly the VM's memory left the free pool; launcher memfds are held by QEMU alone.
  EXPECT_EQ(free_before - HugepagesFree(), pages);
  std::vector<pid_t> memfd_holders = PidsHoldingFd("memfd:qlaunch:" + d.name + ":");
  if (want_prealloc == "launcher") {
    EXPECT_EQ(memfd_holders, std::vector<pid_t>{pid});
  } else {
    EXPECT_EQ(memfd_holders, std::vector<pid_t>{});
  }

  // The thread-contexts served preallocation only: none of their threads ("TC <id>") is left.
  if (want_prealloc == "qemu" && qemu == kQemu72) {
    EXPECT_FALSE(plan["thread_contexts"].empty()) << "QEMU 7.2 preallocates with thread-contexts";
  }
  if (plan.contains("thread_contexts")) {
    std::string threads;
    std::error_code ec;
    for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end;
         it.increment(ec))
      threads += Slurp(it->path() / "comm");
    for (const auto& ctx : plan["thread_contexts"])
      EXPECT_EQ(threads.find("TC " + ctx.value("id", std::string())), std::string::npos)
          << "thread-context thread left:\n" << threads;
  }

  RunResult list = Qlaunch({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  nlohmann::json want_list = nlohmann::json::parse(
      R"([{"name":")" + d.name + R"(","pid":)" + std::to_string(pid) + R"(,"state":"running","memory_bytes":)" +
      std::to_string(d.Bytes()) + R"(,"vcpus":)" + std::to_string(d.cells) + R"(,"graphics":[],"interfaces":[])" + "}]");
  // Its ids, leased to it, and the mount namespace of its own (a root qlaunch gives both).
  const unsigned long qemu_id = std::stoul(QemuIdOf(pid));
  want_list[0]["uid"] = want_list[0]["gid"] = qemu_id;
  want_list[0]["leased"] = ::geteuid() == 0;
  want_list[0]["namespaces"] = ::geteuid() == 0 ? nlohmann::json::array({"mnt"}) : nlohmann::json::array();
  // A transient domain (started from a file, not defined): neither persistent nor autostarted.
  want_list[0]["persistent"] = want_list[0]["autostart"] = false;
  EXPECT_EQ(nlohmann::json::parse(list.out), want_list);

  // dominfo: what it runs as and where its memory sits: all of it on node 0, on both paths.
  RunResult info = Qlaunch({"dominfo", "--json", d.name});
  ASSERT_EQ(info.exit_code, 0) << info.Describe();
  nlohmann::json di = nlohmann::json::parse(info.out);
  EXPECT_EQ(di["pid"], pid);
  EXPECT_EQ(di["state"], "running");
  EXPECT_EQ(di["vcpus"], d.cells);
  EXPECT_EQ(di["memory_bytes"], d.Bytes());
  EXPECT_EQ(di["prealloc"], want_prealloc);
  EXPECT_EQ(di["page_sizes"], nlohmann::json::array({DefaultHugepageBytes()}));
  EXPECT_EQ(di["planned_by_node"], nlohmann::json({{"0", d.Bytes()}})) << di.dump();
  if (::geteuid() == 0) {
    const std::string id = QemuIdOf(pid);
    EXPECT_EQ(di["user"], "+" + id + ":+" + id);
    EXPECT_EQ(di["uid"], std::stoul(id));
    EXPECT_EQ(di["gid"], std::stoul(id));
    EXPECT_EQ(di["leased"], true);
  }
  // Every page of the guest's memory, on node 0 (one node here), whoever filled it: QEMU (its
  // page tables hold them all) or qlaunch (read from the memfds, the guest having touched only
  // some). Each backend says where the figure came from.
  EXPECT_EQ(di["memory_by_node"], nlohmann::json({{"0", d.Bytes()}})) << di.dump();
  uint64_t backends_sum = 0;
  for (const auto& b : di["backends"]) {
    for (const auto& [node, bytes] : b["memory_by_node"].items()) backends_sum += bytes.get<uint64_t>();
    if (::geteuid() == 0 && b.value("page_size_bytes", uint64_t{0}) != 0) {
      EXPECT_EQ(b.value("memory_source", ""), "backing") << "root reads a hugepage backend's file: " << di.dump();
    }
  }
  EXPECT_EQ(backends_sum, d.Bytes()) << di.dump();

  RunResult again = Qlaunch({"start", "--qemu", qemu, xml});
  EXPECT_EQ(again.exit_code, 1) << again.Describe();
  EXPECT_NE(again.err.find("domain " + d.name + " is already running (pid " + std::to_string(pid) + ")"),
            std::string::npos)
      << again.Describe();
  EXPECT_EQ(free_before - HugepagesFree(), pages) << "the refused start took hugepages";

  RunResult destroy = Qlaunch({"destroy", d.name});
  EXPECT_EQ(destroy.exit_code, 0) << destroy.Describe();
  ExpectHostClean(d.name, pid, free_before);

  list = Qlaunch({"list", "--json"});
  EXPECT_EQ(list.out, "[]\n") << list.Describe();
  destroy = Qlaunch({"destroy", d.name});
  EXPECT_EQ(destroy.exit_code, 1) << destroy.Describe();
  EXPECT_NE(destroy.err.find("domain " + d.name + " is not running"), std::string::npos) << destroy.Describe();
}

}  // namespace qlaunch::testing
