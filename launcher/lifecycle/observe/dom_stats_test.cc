#include "launcher/lifecycle/observe/dom_stats.h"

#include <gtest/gtest.h>

#include "common/diagnostic.h"

namespace qlaunch::launcher {
namespace {

using nlohmann::json;

// Replies as QEMU 7.2 gives them for a domain with a virtio disk, an empty SATA cdrom, a user
// NIC and a tap NIC (shapes taken from a running qlaunch domain).
DomStatsInput Input() {
  DomStatsInput in;
  in.status = json::parse(R"({"status":"running","singlestep":false,"running":true})");
  in.balloon = json::parse(R"({"actual":201326592})");
  // A guest that sends no statistics: QEMU says 2^64-1 for each (as libvirt's domain showed it).
  in.guest_stats = json::parse(R"({"stats":{"stat-htlb-pgalloc":18446744073709551615,"stat-swap-out":18446744073709551615,
    "stat-available-memory":18446744073709551615,"stat-htlb-pgfail":18446744073709551615,
    "stat-free-memory":18446744073709551615,"stat-minor-faults":18446744073709551615,
    "stat-major-faults":18446744073709551615,"stat-total-memory":18446744073709551615,
    "stat-swap-in":18446744073709551615,"stat-disk-caches":18446744073709551615},"last-update":0})");
  in.rss_kib = 44872;
  in.cpus = json::parse(R"([
    {"thread-id":4101,"props":{"core-id":0,"thread-id":0,"socket-id":0},"qom-path":"/machine/unattached/device[0]","cpu-index":0,"target":"x86_64"},
    {"thread-id":4102,"props":{"core-id":0,"thread-id":0,"socket-id":1},"qom-path":"/machine/unattached/device[1]","cpu-index":1,"target":"x86_64"}])");
  in.blockstats = json::parse(R"([
    {"device":"","node-name":"libvirt-2-format","qdev":"/machine/peripheral/virtio-disk0/virtio-backend",
     "stats":{"rd_operations":12,"rd_bytes":49152,"rd_total_time_ns":777,"wr_operations":3,"wr_bytes":1536,
              "wr_total_time_ns":888,"flush_operations":2,"flush_total_time_ns":999,"wr_highest_offset":0},
     "parent":{"node-name":"libvirt-2-storage","stats":{"wr_highest_offset":4096}}},
    {"device":"","qdev":"sata0-0-0",
     "stats":{"rd_operations":0,"rd_bytes":0,"rd_total_time_ns":0,"wr_operations":0,"wr_bytes":0,
              "wr_total_time_ns":0,"flush_operations":0,"flush_total_time_ns":0,"wr_highest_offset":0}}])");
  in.block = json::parse(R"([
    {"device":"","qdev":"/machine/peripheral/virtio-disk0/virtio-backend","locked":false,"removable":false,
     "inserted":{"node-name":"libvirt-2-format","file":"/img/a.raw","image":{"virtual-size":1048576,
     "filename":"/img/a.raw","format":"raw","actual-size":8192}}},
    {"device":"","qdev":"sata0-0-0","locked":false,"removable":true,"tray_open":false}])");
  in.memory_kib = 262144;
  in.vcpus_max = 4;
  in.vcpus_current = 2;
  in.disks = {{"vda", "/img/a.raw", "virtio-disk0"}, {"sda", "", "sata0-0-0"}};
  TapCounters tap;
  tap.rx_bytes = 100, tap.rx_packets = 2, tap.rx_errors = 0, tap.rx_dropped = 1;
  tap.tx_bytes = 300, tap.tx_packets = 4, tap.tx_errors = 5, tap.tx_dropped = 6;
  in.nics = {{"", std::nullopt}, {"vnet3", tap}};
  in.vcpu_times = {{4101, {10000000, 20, 30}}, {4102, {40000000, 50, 60}}};
  return in;
}

TEST(DomStats, FieldsInVirshOrder) {
  const std::string want =
      "Domain: 'vm1'\n"
      "  state.state=1\n  state.reason=1\n"
      "  balloon.current=196608\n  balloon.maximum=262144\n  balloon.last-update=0\n  balloon.rss=44872\n"
      "  vcpu.current=2\n  vcpu.maximum=4\n"
      "  vcpu.0.state=1\n  vcpu.0.time=10000000\n  vcpu.0.wait=20\n  vcpu.0.delay=30\n"
      "  vcpu.1.state=1\n  vcpu.1.time=40000000\n  vcpu.1.wait=50\n  vcpu.1.delay=60\n"
      "  net.count=2\n"
      "  net.1.name=vnet3\n  net.1.rx.bytes=300\n  net.1.rx.pkts=4\n  net.1.rx.errs=5\n  net.1.rx.drop=6\n"
      "  net.1.tx.bytes=100\n  net.1.tx.pkts=2\n  net.1.tx.errs=0\n  net.1.tx.drop=1\n"
      "  block.count=2\n"
      "  block.0.name=vda\n  block.0.path=/img/a.raw\n  block.0.backingIndex=2\n"
      "  block.0.rd.reqs=12\n  block.0.rd.bytes=49152\n  block.0.rd.times=777\n"
      "  block.0.wr.reqs=3\n  block.0.wr.bytes=1536\n  block.0.wr.times=888\n"
      "  block.0.fl.reqs=2\n  block.0.fl.times=999\n"
      "  block.0.allocation=4096\n  block.0.capacity=1048576\n  block.0.physical=8192\n"
      "  block.1.name=sda\n"
      "  block.1.rd.reqs=0\n  block.1.rd.bytes=0\n  block.1.rd.times=0\n"
      "  block.1.wr.reqs=0\n  block.1.wr.bytes=0\n  block.1.wr.times=0\n"
      "  block.1.fl.reqs=0\n  block.1.fl.times=0\n"
      "\n";
  EXPECT_EQ(DomStatsText("vm1", DomStats(Input())), want);
}

TEST(DomStats, JsonIsFlatWithNumbersAndStrings) {
  const json j = DomStatsJson(DomStats(Input()));
  EXPECT_EQ(j.at("state.state"), 1);
  EXPECT_EQ(j.at("block.0.path"), "/img/a.raw");
  EXPECT_EQ(j.at("net.1.rx.bytes"), 300);
  EXPECT_FALSE(j.contains("net.0.name"));  // user networking: no tap, no fields (libvirt)
}

TEST(DomStats, StateAndReasonAsLibvirtMapsQemuRunStates) {
  const std::vector<std::pair<std::string, std::pair<int, int>>> cases = {
      {"running", {1, 1}},   {"paused", {3, 1}},   {"prelaunch", {3, 1}},     {"inmigrate", {3, 2}},
      {"postmigrate", {3, 2}}, {"save-vm", {3, 3}}, {"io-error", {3, 5}},     {"watchdog", {3, 6}},
      {"shutdown", {3, 8}},  {"guest-panicked", {3, 10}}, {"debug", {3, 0}}, {"suspended", {7, 0}}};
  for (const auto& [status, want] : cases) {
    DomStatsInput in = Input();
    in.status = {{"status", status}, {"running", status == "running"}};
    const json j = DomStatsJson(DomStats(in));
    EXPECT_EQ(j.at("state.state"), want.first) << status;
    EXPECT_EQ(j.at("state.reason"), want.second) << status;
  }
}

TEST(DomStats, WithoutBalloonCurrentIsAllTheMemory) {
  DomStatsInput in = Input();
  in.balloon = nullptr;
  in.guest_stats = nullptr;
  const json j = DomStatsJson(DomStats(in));
  EXPECT_EQ(j.at("balloon.current"), 262144);
  EXPECT_FALSE(j.contains("balloon.last-update"));
  EXPECT_EQ(j.at("balloon.rss"), 44872);  // libvirt reads QEMU's RSS with or without a balloon
}

// A guest whose balloon driver sends statistics: libvirt's names, KiB for QEMU's bytes, its order.
TEST(DomStats, GuestMemoryStatistics) {
  DomStatsInput in = Input();
  in.guest_stats = json::parse(R"({"stats":{"stat-swap-in":0,"stat-swap-out":0,"stat-major-faults":120,
    "stat-minor-faults":4500,"stat-free-memory":104857600,"stat-total-memory":209715200,
    "stat-available-memory":157286400,"stat-disk-caches":1048576,"stat-htlb-pgalloc":0,
    "stat-htlb-pgfail":18446744073709551615},"last-update":1700000000})");
  std::string balloon;
  for (const auto& [k, v] : DomStats(in))
    if (k.rfind("balloon.", 0) == 0) balloon += k + "=" + v.dump() + " ";
  EXPECT_EQ(balloon,
            "balloon.current=196608 balloon.maximum=262144 balloon.swap_in=0 balloon.swap_out=0 "
            "balloon.major_fault=120 balloon.minor_fault=4500 balloon.unused=102400 balloon.available=204800 "
            "balloon.usable=153600 balloon.last-update=1700000000 balloon.disk_caches=1024 "
            "balloon.hugetlb_pgalloc=0 balloon.rss=44872 ");
}

TEST(DomStats, ThinlessImageAndMissingThreadTimes) {
  DomStatsInput in = Input();
  in.block[0]["inserted"]["image"].erase("actual-size");
  in.vcpu_times.erase(4102);  // the thread went away between the two reads
  const json j = DomStatsJson(DomStats(in));
  EXPECT_EQ(j.at("block.0.physical"), 1048576);
  EXPECT_TRUE(j.contains("vcpu.1.state"));
  EXPECT_FALSE(j.contains("vcpu.1.time"));
}

TEST(DomStats, MalformedRepliesNameTheCommand) {
  DomStatsInput in = Input();
  in.status = json::object();
  EXPECT_THROW(
      {
        try {
          DomStats(in);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("query-status"), std::string::npos) << e.what();
          throw;
        }
      },
      std::runtime_error);
  in = Input();
  in.blockstats[0]["stats"]["rd_bytes"] = -1;
  EXPECT_THROW(DomStats(in), std::runtime_error);
  in = Input();
  in.cpus = json::object();
  EXPECT_THROW(DomStats(in), std::runtime_error);
}

TEST(DomStats, DisksAndTapsFromTheLiveXml) {
  const std::string xml = R"(<domain type='qemu'><name>d</name><devices>
    <disk type='file' device='disk'><source file='/img/a.raw'/><target dev='vda' bus='virtio'/><alias name='virtio-disk0'/></disk>
    <disk type='block' device='disk'><source dev='/dev/sdb'/><target dev='sdb' bus='scsi'/><alias name='scsi0-0-0-1'/></disk>
    <disk type='file' device='cdrom'><target dev='sda' bus='sata'/><alias name='sata0-0-0'/></disk>
    <interface type='user'><mac address='52:54:00:00:00:01'/></interface>
    <interface type='bridge'><source bridge='br0'/><target dev='vnet0'/></interface>
  </devices></domain>)";
  const std::vector<StatsDisk> disks = StatsDisks(xml, "d.xml");
  ASSERT_EQ(disks.size(), 3u);
  EXPECT_EQ(disks[0].target + " " + disks[0].source + " " + disks[0].alias, "vda /img/a.raw virtio-disk0");
  EXPECT_EQ(disks[1].target + " " + disks[1].source + " " + disks[1].alias, "sdb /dev/sdb scsi0-0-0-1");
  EXPECT_EQ(disks[2].source, "");
  EXPECT_EQ(StatsTaps(xml, "d.xml"), (std::vector<std::string>{"", "vnet0"}));
  EXPECT_EQ(StatsBalloonAlias(xml, "d.xml"), "");
  EXPECT_EQ(StatsBalloonAlias("<domain><devices><memballoon model='virtio'><alias name='balloon0'/></memballoon>"
                              "</devices></domain>",
                              "d.xml"),
            "balloon0");
  EXPECT_EQ(StatsBalloonAlias("<domain><devices><memballoon model='none'/></devices></domain>", "d.xml"), "");
  EXPECT_THROW(StatsDisks("<domain", "bad.xml"), DiagnosticError);
}

// A disk QEMU does not list (no alias in an old state dir): its name and path, no counters.
TEST(DomStats, DiskWithoutQemuEntry) {
  DomStatsInput in = Input();
  in.disks = {{"vdb", "/img/b.raw", ""}};
  const json j = DomStatsJson(DomStats(in));
  EXPECT_EQ(j.at("block.0.name"), "vdb");
  EXPECT_FALSE(j.contains("block.0.rd.reqs"));
}

}  // namespace
}  // namespace qlaunch::launcher
