// Chains of run-time verbs on one booted guest that each verb alone survives, and that lost the guest
// (issue 34), as regression tests: the guest (tests/support/migrate_guest.h) counts on its console
// and sums 64 MiB of random bytes in its RAM, and after the chain it must count on from where it was,
// without booting again, with the same sum.
//   1. `migrate --local`, then `save` and `restore`: the new QEMU kept x-ignore-shared on, the save
//      carried no RAM and destroyed the domain, the restore failed. And `migrate --local`, then a live
//      migration, which the destination refused on the same capability.
//   2. `setvcpus` (a vCPU plugged) and `attach-device` (a virtio disk), then `save` and `restore`: the
//      restore started the plugged vCPU with -smp, the disk got another queue count, QEMU could not
//      load it. A damaged copy of the file (QEMU dies while loading) is refused with nothing left.
//   3. The same two, then a live migration: first to a destination that cannot load the guest (it
//      lacks the disk), which fails and leaves the source running (it used to be released before the
//      destination had loaded anything), then to one from the live XML, which takes it.
//   4. A defined domain (issue 39) through the run-time verbs: `define`, `start NAME`, a vCPU and a
//      disk plugged, `save` (still defined, shut off), `restore`, `destroy`, `start NAME` again (a
//      fresh boot of the definition, without what was plugged), `undefine` while it runs (it runs on,
//      transient), `destroy`: gone.
// Under TCG, as every booted-guest test here.
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/migrate_guest.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::seconds;

class VerbChainTest : public MigrateGuestTest {
 protected:
  // The "return" of a QMP command without arguments to `name`'s QEMU under `env`'s root.
  json Qmp(const std::string& name, const std::string& command, const Env& env = {}) {
    RunResult r = Qlaunch({"qemu-monitor-command", name, R"({"execute":")" + command + R"("})"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    const json reply = json::parse(r.out, nullptr, false);
    return reply.is_object() && reply.contains("return") ? reply["return"] : json();
  }
  // The state of one migration capability in `name`'s QEMU.
  bool Capability(const std::string& name, const std::string& capability) {
    for (const json& c : Qmp(name, "query-migrate-capabilities"))
      if (c.value("capability", "") == capability) return c.value("state", false);
    ADD_FAILURE() << "QEMU has no capability " << capability;
    return false;
  }
  // Two cells of two vCPUs, two of the four running at boot, with ACPI for the vCPU hotplug.
  static void HotplugShape(SmallDomain* d) {
    d->vcpus_per_cell = 2;
    d->current_vcpus = 2;
    d->features = "<acpi/><apic/>";
  }
  // setvcpus NAME 3 and attach-device of a 1 MiB raw virtio disk (vdb): the guest runs as before.
  void PlugVcpuAndDisk(const std::string& name) {
    RunResult up = Qlaunch({"setvcpus", name, "3"});
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
    const fs::path image = tmp() / (name + "-vdb.raw");
    std::ofstream(image) << std::string(MiB, '\0');
    const fs::path disk = tmp() / (name + "-vdb.xml");
    std::ofstream(disk) << "<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='"
                        << image.string() << "'/><target dev='vdb' bus='virtio'/></disk>\n";
    RunResult attached = Qlaunch({"attach-device", name, disk.string()});
    ASSERT_EQ(attached.exit_code, 0) << attached.Describe();
    ExpectCounting(source_);
  }
  // `name`'s QEMU under `env` runs vCPUs 0-2, the third plugged (vcpu2), and has the disk vdb.
  void ExpectVcpuAndDisk(const std::string& name, const Env& env = {}) {
    unsigned plugged = 0;
    bool vcpu2 = false;
    for (const json& c : Qmp(name, "query-hotpluggable-cpus", env)) {
      plugged += c.contains("qom-path");
      vcpu2 |= c.value("qom-path", "") == "/machine/peripheral/vcpu2";
    }
    EXPECT_EQ(plugged, 3u);
    EXPECT_TRUE(vcpu2) << "the third vCPU is a plugged device again, not a boot vCPU";
    RunResult blk = Qlaunch({"domblklist", name}, env);
    EXPECT_NE(blk.out.find("vdb"), std::string::npos) << blk.Describe();
    RunResult info = Qlaunch({"dominfo", "--json", name}, env);
    ASSERT_EQ(info.exit_code, 0) << info.Describe();
    EXPECT_EQ(json::parse(info.out).value("vcpus", 0u), 3u) << info.out;
  }
  // save NAME FILE --json: the report, after checking the stream carries the random buffer.
  json Save(const std::string& name, const fs::path& file) {
    RunResult saved = Qlaunch({"save", "--json", name, file.string()}, {}, std::chrono::minutes(3));
    EXPECT_EQ(saved.exit_code, 0) << saved.Describe();
    if (saved.exit_code != 0) return json();
    const json r = json::parse(saved.out);
    EXPECT_GE(r.value("stream_bytes", uint64_t{0}), 64 * MiB) << "the guest's RAM is not in the file: " << saved.out;
    return r;
  }
  // restore FILE: the domain runs again under root A and the guest counts on from `last`.
  void RestoreAndGoOn(const std::string& name, const fs::path& file, uint64_t last) {
    RunResult restored = Qlaunch({"restore", "--json", file.string()}, {}, std::chrono::minutes(3));
    ASSERT_EQ(restored.exit_code, 0) << restored.Describe();
    EXPECT_EQ(json::parse(restored.out).value("state", ""), "running") << restored.out;
    EXPECT_EQ(Listed(name).value("state", ""), "running");
    ExpectGoesOnAt(source_, last);
  }
  // Destroys `name` under root A: nothing of it is left, every page back.
  void DestroyAndExpectClean(const std::string& name) {
    const pid_t pid = Listed(name).value("pid", 0);
    RunResult destroyed = Qlaunch({"destroy", name});
    EXPECT_EQ(destroyed.exit_code, 0) << destroyed.Describe();
    ExpectHostClean(name, pid, free_before_);
    ExpectNothingLeft(name, free_before_);
  }
};

TEST_F(VerbChainTest, LocalSwapThenSaveCarriesTheRamAndTheRestoredGuestGoesOn) {
  const std::string name = "chain-local-save";
  ASSERT_NO_FATAL_FAILURE(BootSource(name));
  RunResult swapped = Qlaunch({"migrate", name, "--local", "--json"}, {}, std::chrono::minutes(2));
  ASSERT_EQ(swapped.exit_code, 0) << swapped.Describe();
  const pid_t swapped_pid = json::parse(swapped.out).value("new_pid", 0);
  EXPECT_FALSE(Capability(name, "x-ignore-shared")) << "the handover's capability stays on in the new QEMU";
  ExpectCounting(source_);

  const fs::path file = tmp() / "local-save.qsave";
  ASSERT_FALSE(Save(name, file).is_null());
  ExpectQemuGone(swapped_pid);
  EXPECT_EQ(Qlaunch({"list", "--json"}).out, "[]\n");
  EXPECT_EQ(HugepagesFree(), free_before_) << "every page back while the guest is in the file";
  ASSERT_NO_FATAL_FAILURE(RestoreAndGoOn(name, file, LastCount(source_)));
  DestroyAndExpectClean(name);
}

TEST_F(VerbChainTest, LocalSwapThenLiveMigrationMovesTheGuest) {
  const std::string name = "chain-local-mig";
  ASSERT_NO_FATAL_FAILURE(BootSource(name));
  RunResult swapped = Qlaunch({"migrate", name, "--local"}, {}, std::chrono::minutes(2));
  ASSERT_EQ(swapped.exit_code, 0) << swapped.Describe();
  const json incoming = StartIncoming(name, "tcp:127.0.0.1:0");
  ASSERT_FALSE(incoming.is_null());
  RunResult migrated = Qlaunch({"migrate", name, incoming.value("incoming", ""), "--json"}, {}, std::chrono::minutes(5));
  ASSERT_EQ(migrated.exit_code, 0) << migrated.Describe();
  EXPECT_GE(json::parse(migrated.out).value("ram_transferred_bytes", uint64_t{0}), 64 * MiB) << migrated.out;
  EXPECT_EQ(StateAfterIncoming(name, B(), seconds(30)), "running");
  ExpectGuestGoesOn(LastCount(source_));
  const pid_t dest_pid = Listed(name, B()).value("pid", 0);
  EXPECT_EQ(Qlaunch({"destroy", name}, B()).exit_code, 0);
  ExpectHostClean(name, dest_pid, free_before_, OtherStateDir("b"));
  ExpectNothingLeft(name, free_before_);
}

TEST_F(VerbChainTest, PluggedVcpuAndAttachedDiskSurviveSaveAndRestore) {
  const std::string name = "chain-plug-save";
  ASSERT_NO_FATAL_FAILURE(BootSource(name, HotplugShape));
  ASSERT_NO_FATAL_FAILURE(PlugVcpuAndDisk(name));
  const fs::path file = tmp() / "plug-save.qsave";
  ASSERT_FALSE(Save(name, file).is_null());
  const uint64_t last = LastCount(source_);

  // A copy whose device state is garbage (QEMU dies while it loads) is refused after QEMU has
  // tried it, and leaves nothing behind. The stream ends with QEMU's JSON description of the
  // devices, which the loader skips: the 4 KiB before it (its 6-byte header) are the last devices.
  const fs::path damaged = tmp() / "damaged.qsave";
  std::string bytes = Slurp(file);
  const size_t vmdesc = bytes.rfind("{\"page_size\"");
  ASSERT_NE(vmdesc, std::string::npos) << "no device description at the end of " << file;
  ASSERT_GT(vmdesc, 6u + 4096u);
  bytes.replace(vmdesc - 6 - 4096, 4096, std::string(4096, '\xa5'));
  std::ofstream(damaged, std::ios::binary) << bytes;
  RunResult refused = Qlaunch({"restore", damaged.string()}, {}, std::chrono::minutes(3));
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_NE(refused.err.find("restore of domain " + name + " from " + damaged.string() + " failed"), std::string::npos)
      << refused.err;
  EXPECT_EQ(Qlaunch({"list", "--json"}).out, "[]\n");
  EXPECT_EQ(HugepagesFree(), free_before_);
  EXPECT_EQ(LiveChildren(), std::vector<pid_t>{});

  ASSERT_NO_FATAL_FAILURE(RestoreAndGoOn(name, file, last));
  ExpectVcpuAndDisk(name);
  RunResult live = Qlaunch({"dumpxml", name});
  EXPECT_NE(live.out.find("hotpluggable=\"yes\" order=\"3\""), std::string::npos) << live.out;
  DestroyAndExpectClean(name);
}

TEST_F(VerbChainTest, PluggedVcpuAndAttachedDiskMigrateAndAFailedDestinationKeepsTheSource) {
  const std::string name = "chain-plug-mig";
  ASSERT_NO_FATAL_FAILURE(BootSource(name, HotplugShape));
  const std::string boot_xml = DestinationXml(name);  // before the changes: no vdb, two vCPUs
  ASSERT_NO_FATAL_FAILURE(PlugVcpuAndDisk(name));

  // A destination without the disk cannot load the stream: QEMU there fails and exits once the
  // whole stream is in, and the source, which waited for its word (the return path), runs on.
  RunResult wrong = Qlaunch({"start", "--incoming", "tcp:127.0.0.1:0", "--json", boot_xml}, B());
  ASSERT_EQ(wrong.exit_code, 0) << wrong.Describe();
  const pid_t wrong_pid = json::parse(wrong.out).value("pid", 0);
  RunResult failed =
      Qlaunch({"migrate", name, json::parse(wrong.out).value("incoming", ""), "--json"}, {}, std::chrono::minutes(5));
  EXPECT_EQ(failed.exit_code, 1) << failed.Describe();
  EXPECT_NE(failed.err.find("the destination did not confirm that it loaded the guest"), std::string::npos)
      << failed.err;
  EXPECT_NE(failed.err.find("the domain stays here (running)"), std::string::npos) << failed.err;
  EXPECT_EQ(Listed(name).value("state", ""), "running");
  EXPECT_EQ(Listed(name).value("pid", 0), source_pid_);
  EXPECT_FALSE(Capability(name, "return-path")) << "the migration's capabilities are put back";
  ExpectCounting(source_);
  ExpectQemuGone(wrong_pid);
  EXPECT_EQ(Qlaunch({"list", "--json"}, B()).out, "[]\n") << "the failed destination is cleared by list";

  const json incoming = StartIncoming(name, "tcp:127.0.0.1:0");
  ASSERT_FALSE(incoming.is_null());
  RunResult migrated = Qlaunch({"migrate", name, incoming.value("incoming", "")}, {}, std::chrono::minutes(5));
  ASSERT_EQ(migrated.exit_code, 0) << migrated.Describe();
  ExpectGoneFromSource(name);
  EXPECT_EQ(StateAfterIncoming(name, B(), seconds(30)), "running");
  ExpectGuestGoesOn(LastCount(source_));
  ExpectVcpuAndDisk(name, B());
  const pid_t dest_pid = incoming.value("pid", 0);
  EXPECT_EQ(Qlaunch({"destroy", name}, B()).exit_code, 0);
  ExpectHostClean(name, dest_pid, free_before_, OtherStateDir("b"));
  ExpectNothingLeft(name, free_before_);
}

TEST_F(VerbChainTest, DefinedDomainThroughSaveRestoreStartAgainAndUndefine) {
  const std::string name = "chain-defined";
  // `list --all --json`'s entry of `name`, or null.
  const auto listed_all = [&]() -> json {
    RunResult all = Qlaunch({"list", "--all", "--json"});
    EXPECT_EQ(all.exit_code, 0) << all.Describe();
    for (const json& e : json::parse(all.out, nullptr, false))
      if (e.value("name", "") == name) return e;
    return json();
  };
  ASSERT_NO_FATAL_FAILURE(BootSource(name, HotplugShape, /*defined=*/true));
  EXPECT_TRUE(listed_all().value("persistent", false));
  ASSERT_NO_FATAL_FAILURE(PlugVcpuAndDisk(name));

  const fs::path file = tmp() / "defined.qsave";
  ASSERT_FALSE(Save(name, file).is_null());
  ExpectQemuGone(source_pid_);
  EXPECT_EQ(listed_all().value("state", ""), "shut off") << "saved: still defined";
  EXPECT_EQ(HugepagesFree(), free_before_);
  ASSERT_NO_FATAL_FAILURE(RestoreAndGoOn(name, file, LastCount(source_)));
  ExpectVcpuAndDisk(name);
  EXPECT_TRUE(listed_all().value("persistent", false)) << "restored: still the defined domain";

  const pid_t restored_pid = Listed(name).value("pid", 0);
  ASSERT_EQ(Qlaunch({"destroy", name}).exit_code, 0);
  ExpectHostClean(name, restored_pid, free_before_);
  EXPECT_EQ(listed_all().value("state", ""), "shut off");

  // Started again by name: the definition boots, without the vCPU and the disk plugged at run time.
  RunResult again = Qlaunch({"start", "--json", name});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  const pid_t again_pid = json::parse(again.out).value("pid", 0);
  RunResult info = Qlaunch({"dominfo", "--json", name});
  ASSERT_EQ(info.exit_code, 0) << info.Describe();
  EXPECT_EQ(json::parse(info.out).value("vcpus", 0u), 2u) << info.out;
  EXPECT_EQ(Qlaunch({"domblklist", name}).out.find("vdb"), std::string::npos);

  RunResult undefined = Qlaunch({"undefine", name});
  ASSERT_EQ(undefined.exit_code, 0) << undefined.Describe();
  const json transient = listed_all();
  EXPECT_EQ(transient.value("state", ""), "running") << "undefine leaves a running domain running";
  EXPECT_FALSE(transient.value("persistent", true));
  ASSERT_EQ(Qlaunch({"destroy", name}).exit_code, 0);
  ExpectHostClean(name, again_pid, free_before_);
  EXPECT_TRUE(listed_all().is_null()) << "neither running nor defined";
}

}  // namespace
}  // namespace qlaunch::testing
