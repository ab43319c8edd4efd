// setvcpus: vCPUs plugged into and unplugged from a running domain as `virsh setvcpus --live`
// does. On a guest that never boots: the device_add commands (libvirt's driver, id and props, the
// new vCPU in its guest cell), what QEMU runs after, the refusals, and an unplug the guest never
// answers (the record keeps what QEMU runs). On a booted guest (Debian's kernel, busybox
// initramfs, tests/boot/hotplug-init onlining every CPU it is given and reporting them once a
// second): the guest sees the vCPUs come, and an unplug refused under TCG leaves them. Under TCG.
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "support/hotplug_guest.h"
#include "support/launch_env.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class SetvcpusTest : public LaunchTest {
 protected:
  std::string WriteXml(const std::string& name, const std::string& os, const std::string& cpu,
                       const std::string& devices) {
    const fs::path xml = tmp() / (name + ".xml");
    std::ofstream(xml) << "<domain type='qemu'>\n  <name>" << name << "</name>\n  <memory unit='MiB'>256</memory>\n"
                       << "  <vcpu placement='static' current='1'>3</vcpu>\n  <os>\n"
                       << "    <type arch='x86_64' machine='pc'>hvm</type>\n" << os << "  </os>\n"
                       << "  <features><acpi/><apic/></features>\n" << cpu << "  <devices>\n" << devices
                       << "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
    return xml.string();
  }
  json Info(const std::string& name) {
    RunResult r = Qlaunch({"dominfo", "--json", name});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  }
  json Qmp(const std::string& name, const std::string& command) {
    RunResult r = Qlaunch({"qemu-monitor-command", name, R"({"execute":")" + command + R"("})"});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    json reply = json::parse(r.out, nullptr, false);
    return reply.is_object() && reply.contains("return") ? reply["return"] : reply;
  }
};

TEST_F(SetvcpusTest, PlugsAsLibvirtDoesIntoTheRightCellAndRefusesWhatItRefuses) {
  const std::string xml = WriteXml(
      "sv-cells", "",
      "  <cpu mode='custom'>\n    <model>qemu64</model>\n    <topology sockets='3' cores='1' threads='1'/>\n"
      "    <numa>\n      <cell id='0' cpus='0' memory='128' unit='MiB'/>\n"
      "      <cell id='1' cpus='1-2' memory='128' unit='MiB'/>\n    </numa>\n  </cpu>\n",
      "");
  RunResult started = Qlaunch({"start", xml});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  EXPECT_EQ(Info("sv-cells").value("vcpus", 0u), 1u);
  EXPECT_EQ(Info("sv-cells").value("max_vcpus", 0u), 3u);

  auto listed_vcpus = [&] {
    RunResult listed = Qlaunch({"list", "--json"});
    EXPECT_EQ(listed.exit_code, 0) << listed.Describe();
    return listed.exit_code == 0 ? json::parse(listed.out).at(0).value("vcpus", 0u) : 0u;
  };
  EXPECT_EQ(listed_vcpus(), 1u) << "the vCPUs that run, not the maximum";

  // The refusals, on a guest with room to grow (1 of 3): one that sent anything would change
  // what QEMU runs (the plugs of a COUNT past the maximum, a --config taken as --live).
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{"setvcpus", "sv-cells", "4"}, "requested vcpus is greater than max allowable vcpus for the live domain: 4 > 3"},
           {{"setvcpus", "sv-cells", "0"}, "at least one"},
           {{"setvcpus", "--config", "sv-cells", "2"}, "keeps no stored definition"},
           {{"setvcpus", "--maximum", "sv-cells", "2"}, "fixed at its start"},
           {{"setvcpus", "sv-cells", "two"}, "two"},
       }) {
    RunResult r = Qlaunch(c.args);
    EXPECT_NE(r.exit_code, 0) << r.Describe();
    EXPECT_NE(r.err.find(c.error), std::string::npos) << r.Describe();
  }
  EXPECT_EQ(Qmp("sv-cells", "query-cpus-fast").size(), 1u) << "a refusal sent nothing";
  EXPECT_EQ(listed_vcpus(), 1u);

  RunResult up = Qlaunch({"setvcpus", "--json", "sv-cells", "3"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const json out = json::parse(up.out);
  EXPECT_EQ(out.at("before"), 1);
  EXPECT_EQ(out.at("after"), 3);
  EXPECT_EQ(listed_vcpus(), 3u) << "list sees the domain as it runs now";
  // libvirt 9.0's device_add of a vCPU: the type QEMU reports, id vcpu<N>, its topology and cell.
  const json want = json::array(
      {{{"execute", "device_add"},
        {"arguments",
         {{"driver", "qemu64-x86_64-cpu"}, {"id", "vcpu1"}, {"socket-id", 1}, {"core-id", 0}, {"thread-id", 0}, {"node-id", 1}}}},
       {{"execute", "device_add"},
        {"arguments",
         {{"driver", "qemu64-x86_64-cpu"}, {"id", "vcpu2"}, {"socket-id", 2}, {"core-id", 0}, {"thread-id", 0}, {"node-id", 1}}}}});
  EXPECT_EQ(out.at("qmp"), want) << out.dump(1);

  // What QEMU runs: three vCPUs, the new ones in guest cell 1 under the ids libvirt gives them.
  const json cpus = Qmp("sv-cells", "query-cpus-fast");
  ASSERT_TRUE(cpus.is_array()) << cpus.dump();
  EXPECT_EQ(cpus.size(), 3u) << cpus.dump();
  for (const json& c : cpus) {
    const int index = c.value("cpu-index", -1);
    EXPECT_EQ(c["props"].value("node-id", -1), index == 0 ? 0 : 1) << c.dump();
    if (index > 0) {
      EXPECT_EQ(c.value("qom-path", ""), "/machine/peripheral/vcpu" + std::to_string(index)) << c.dump();
    }
  }
  EXPECT_EQ(Info("sv-cells").value("vcpus", 0u), 3u);
  const std::string live = Qlaunch({"dumpxml", "sv-cells"}).out;
  EXPECT_TRUE(std::regex_search(live, std::regex("<vcpu placement=.static.>3</vcpu>"))) << live;


  // Under TCG an unplug is refused before anything is sent (docs/usage.md: QEMU keeps the
  // unplugged vCPU's translator state, and the next plug or save loses the guest).
  RunResult down = Qlaunch({"setvcpus", "--timeout", "1", "sv-cells", "2"});
  EXPECT_EQ(down.exit_code, 1) << down.Describe();
  EXPECT_NE(down.err.find("setvcpus sv-cells: QEMU cannot unplug a vCPU of a guest it runs under TCG"), std::string::npos)
      << down.Describe();
  EXPECT_NE(down.err.find("; the domain runs 3 vCPUs as before"), std::string::npos) << down.Describe();
  EXPECT_EQ(Qmp("sv-cells", "query-cpus-fast").size(), 3u);
  EXPECT_EQ(Info("sv-cells").value("vcpus", 0u), 3u);
  EXPECT_EQ(Qlaunch({"destroy", "sv-cells"}).exit_code, 0);
}

TEST_F(SetvcpusTest, ABootedGuestSeesVcpusComeAndKeepsThemUnderTcg) {
  const HotplugGuest guest = MakeHotplugGuest(tmp());
  if (!guest.missing.empty()) GTEST_SKIP() << guest.missing;
  const std::string xml = WriteXml("sv-boot", guest.OsXml(), "", guest.SerialXml());
  RunResult started = Qlaunch({"start", xml});
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  // The guest's last "present online" report, waiting until it is `want`.
  auto cpus_reach = [&](const std::string& want, std::chrono::seconds limit) {
    const std::string last = guest.Report("cpus", [&](const std::string& v) { return v == want; }, limit);
    return last == want ? last : "timed out; last report: '" + last + "'";
  };
  EXPECT_EQ(cpus_reach("0 0", std::chrono::seconds(120)), "0 0");

  RunResult up = Qlaunch({"setvcpus", "sv-boot", "3"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_EQ(cpus_reach("0-2 0-2", std::chrono::seconds(60)), "0-2 0-2");

  // A guest that would release the vCPU (it onlines and offlines what ACPI says): the refusal
  // under TCG sends nothing, so it keeps all three, and QEMU goes on.
  RunResult down = Qlaunch({"setvcpus", "--timeout", "60", "sv-boot", "2"});
  EXPECT_EQ(down.exit_code, 1) << down.Describe();
  EXPECT_NE(down.err.find("under TCG"), std::string::npos) << down.Describe();
  // Two reports later the guest has had a second to take a vCPU away, had it been asked to.
  ASSERT_TRUE(guest.AwaitNewReports("cpus", 2, std::chrono::seconds(30))) << "the guest stopped reporting";
  EXPECT_EQ(cpus_reach("0-2 0-2", std::chrono::seconds(5)), "0-2 0-2");
  EXPECT_EQ(Info("sv-boot").value("vcpus", 0u), 3u);
  EXPECT_EQ(Info("sv-boot").value("state", ""), "running");
  EXPECT_EQ(Qmp("sv-boot", "query-cpus-fast").size(), 3u);
  EXPECT_EQ(Qlaunch({"destroy", "sv-boot"}).exit_code, 0);
}

}  // namespace
}  // namespace qlaunch::testing
