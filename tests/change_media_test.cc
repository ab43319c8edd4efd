// `qlaunch change-media` on a real QEMU 7.2 domain (TCG, q35: a virtio disk, an empty SATA cdrom
// and one with an image): insert, change, eject, each as QEMU reports it afterwards (query-block:
// the file in the drive and libvirt's node name for it; no node left over in
// query-named-block-nodes), as `qlaunch domblklist` lists it, and with the files' owners (the
// inserted image QEMU's user's, a removed one its owner's again, and after destroy too). Bad
// input is refused with the guest, its nodes, the labels and the state dir untouched. And, where
// libvirt 9.0 runs, the same sequence with `virsh change-media` gives the same query-block facts
// and the same node names.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>

#include "support/launch_env.h"
#include "support/libvirt.h"
#include "support/qmp_facts.h"
#include "support/slurp.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kName = "media";

// "uid:gid:mode" of a file.
std::string Owner(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) + ":" + std::to_string(st.st_mode & 07777);
}

// A raw image of 1 MiB whose first bytes name it.
void MakeImage(const fs::path& p) {
  std::ofstream out(p, std::ios::binary);
  std::string block(1 << 20, '\0');
  block.replace(0, p.filename().string().size(), p.filename().string());
  out << block;
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
}

std::string DomainXml(const fs::path& disk, const fs::path& iso) {
  return std::string("<domain type='qemu'>\n  <name>") + kName +
         "</name>\n  <memory unit='MiB'>128</memory>\n"
         "  <vcpu>1</vcpu>\n  <os><type arch='x86_64' machine='q35'>hvm</type></os>\n"
         "  <devices>\n    <emulator>" + kQemu72 + "</emulator>\n"
         "    <disk type='file' device='disk'>\n      <driver name='qemu' type='raw'/>\n"
         "      <source file='" + disk.string() + "'/>\n      <target dev='vda' bus='virtio'/>\n    </disk>\n"
         "    <disk type='file' device='cdrom'>\n      <driver name='qemu' type='raw'/>\n"
         "      <target dev='sda' bus='sata'/>\n      <readonly/>\n    </disk>\n"
         "    <disk type='file' device='cdrom'>\n      <driver name='qemu' type='raw'/>\n"
         "      <source file='" + iso.string() + "'/>\n"
         "      <target dev='sdb' bus='sata'/>\n      <readonly/>\n    </disk>\n"
         "    <memballoon model='none'/>\n  </devices>\n</domain>\n";
}

// Per drive (by qdev id): {"file", "node", "tray_open", "ro"} from query-block; file and node
// "" for an empty drive.
json Drives(const json& query_block) {
  json out = json::object();
  for (const json& b : query_block) {
    json d = {{"file", ""}, {"node", ""}, {"tray_open", b.value("tray_open", false)}, {"ro", nullptr}};
    if (b.contains("inserted")) {
      d["file"] = b["inserted"].value("file", "");
      d["node"] = b["inserted"].value("node-name", "");
      d["ro"] = b["inserted"].value("ro", false);
    }
    out[b.value("qdev", "?")] = d;
  }
  return out;
}

// The node names QEMU has (query-named-block-nodes), sorted.
std::vector<std::string> NodeNames(const json& nodes) {
  std::vector<std::string> out;
  for (const json& n : nodes) out.push_back(n.value("node-name", ""));
  std::sort(out.begin(), out.end());
  return out;
}

using Runner = std::function<RunResult(const std::vector<std::string>&)>;

json Qmp(const Runner& run, const std::string& command) {
  RunResult r = run({"qemu-monitor-command", kName, "{\"execute\":\"" + command + "\"}"});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  json j = json::parse(r.out, nullptr, false);
  return j.is_object() && j.contains("return") ? j["return"] : json();
}

class ChangeMediaTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (std::string why = CheckQemuVersion(kQemu72, "7.2"); !why.empty()) GTEST_SKIP() << why;
    for (const char* f : {"disk.img", "first.iso", "a.iso", "b,c.iso"}) MakeImage(tmp() / f);
    xml_ = (tmp() / "media.xml").string();
    std::ofstream(xml_) << DomainXml(tmp() / "disk.img", tmp() / "first.iso");
  }
  void TearDown() override {
    if (pid_ > 0 && !PidGone(pid_)) Qlaunch({"destroy", kName});
    LaunchTest::TearDown();
  }
  void Start() {
    RunResult r = Qlaunch({"start", "--json", xml_});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    pid_ = json::parse(r.out).at("pid").get<pid_t>();
  }
  Runner Ours() {
    return [this](const std::vector<std::string>& args) { return Qlaunch(args); };
  }
  // QEMU's user, as the files given to it show it.
  std::string QemuOwner(const std::string& mode) {
    const std::map<std::string, std::string> status = ProcStatus(pid_);
    auto first = [](const std::string& ids) { return ids.substr(0, ids.find('\t')); };
    return first(status.at("Uid")) + ":" + first(status.at("Gid")) + ":" + mode;
  }
  // domblklist --json as target -> source (null for none).
  json Blklist() {
    RunResult r = Qlaunch({"domblklist", "--json", kName});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    json out = json::object();
    for (const json& row : json::parse(r.out, nullptr, false)) out[row.value("target", "")] = row["source"];
    return out;
  }

  std::string xml_;
  pid_t pid_ = 0;
};

TEST_F(ChangeMediaTest, InsertChangeEjectAsQemuAndDomblklistReportThem) {
  const std::string before = Owner(tmp() / "a.iso");
  ASSERT_NO_FATAL_FAILURE(Start());
  const bool root = ::geteuid() == 0;
  const std::string first = (tmp() / "first.iso").string(), a = (tmp() / "a.iso").string(),
                    bc = (tmp() / "b,c.iso").string();
  // libvirt's node names at start: libvirt-N counted from the last disk up.
  json drives = Drives(Qmp(Ours(), "query-block"));
  EXPECT_EQ(drives["sata0-0-0"], json::parse(R"({"file":"","node":"","tray_open":false,"ro":null})"));
  EXPECT_EQ(drives["sata0-0-1"]["node"], "libvirt-1-format");
  EXPECT_EQ(drives["/machine/peripheral/virtio-disk0/virtio-backend"]["node"], "libvirt-3-format");

  // Insert into the empty drive: the next index is 4.
  RunResult ins = Qlaunch({"change-media", "--json", kName, "sda", a, "--insert"});
  ASSERT_EQ(ins.exit_code, 0) << ins.Describe();
  json out = json::parse(ins.out);
  EXPECT_EQ(out["device"], "sata0-0-0");
  EXPECT_EQ(out["new_node"], "libvirt-4");
  EXPECT_EQ(out["old_node"], nullptr);
  drives = Drives(Qmp(Ours(), "query-block"));
  EXPECT_EQ(drives["sata0-0-0"], json({{"file", a}, {"node", "libvirt-4-format"}, {"tray_open", false}, {"ro", true}}));
  EXPECT_EQ(Blklist(), json({{"vda", (tmp() / "disk.img").string()}, {"sda", a}, {"sdb", first}}));
  if (root) {
    EXPECT_EQ(Owner(a), QemuOwner("420")) << "the inserted image is QEMU's user's";
  }

  // Change the other drive, named by its source, to a file with a comma in its name.
  const std::string first_owner = root ? QemuOwner("420") : Owner(first);
  EXPECT_EQ(Owner(first), first_owner);
  RunResult upd = Qlaunch({"change-media", kName, first, bc});
  ASSERT_EQ(upd.exit_code, 0) << upd.Describe();
  EXPECT_EQ(upd.out, "Successfully updated media.\n");
  drives = Drives(Qmp(Ours(), "query-block"));
  EXPECT_EQ(drives["sata0-0-1"], json({{"file", bc}, {"node", "libvirt-5-format"}, {"tray_open", false}, {"ro", true}}));
  EXPECT_EQ(Blklist()["sdb"], bc);
  EXPECT_EQ(Owner(first), before) << "the removed image is its owner's again";
  if (root) {
    EXPECT_EQ(Owner(bc), QemuOwner("420"));
  }
  std::vector<std::string> nodes = NodeNames(Qmp(Ours(), "query-named-block-nodes"));
  EXPECT_EQ(nodes, (std::vector<std::string>{"libvirt-3-format", "libvirt-3-storage", "libvirt-4-format",
                                             "libvirt-4-storage", "libvirt-5-format", "libvirt-5-storage"}))
      << "the old medium's nodes are gone";

  // Eject: the drive is empty and closed, a.iso its owner's again; the index 6 is taken.
  RunResult ej = Qlaunch({"change-media", kName, "sda", "--eject"});
  ASSERT_EQ(ej.exit_code, 0) << ej.Describe();
  EXPECT_EQ(ej.out, "Successfully ejected media.\n");
  drives = Drives(Qmp(Ours(), "query-block"));
  EXPECT_EQ(drives["sata0-0-0"], json::parse(R"({"file":"","node":"","tray_open":false,"ro":null})"));
  EXPECT_EQ(Blklist(), json({{"vda", (tmp() / "disk.img").string()}, {"sda", nullptr}, {"sdb", bc}}));
  EXPECT_EQ(Owner(a), before);
  RunResult again = Qlaunch({"change-media", "--json", kName, "sda", a});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(json::parse(again.out)["new_node"], "libvirt-7") << "an eject takes an index, as in libvirt";

  // dumpxml shows the new sources; --inactive the XML as given.
  RunResult live = Qlaunch({"dumpxml", kName});
  ASSERT_EQ(live.exit_code, 0) << live.Describe();
  EXPECT_NE(live.out.find("<source file=\"" + bc + "\"/>"), std::string::npos) << live.out;
  EXPECT_EQ(live.out.find(first), std::string::npos) << live.out;
  EXPECT_EQ(Qlaunch({"dumpxml", "--inactive", kName}).out, Slurp(xml_));

  // destroy gives every file back.
  ASSERT_EQ(Qlaunch({"destroy", kName}).exit_code, 0);
  for (const std::string& f : {first, a, bc}) EXPECT_EQ(Owner(f), before) << f;
}

TEST_F(ChangeMediaTest, BadInputIsRefusedWithTheGuestUntouched) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const fs::path dir = DomainStateDir(kName);
  const std::string first = (tmp() / "first.iso").string(), a = (tmp() / "a.iso").string();
  // The drives as QEMU reports them (not the whole query-block: the guest's firmware may turn the
  // virtio disk's write cache off meanwhile).
  const json block = Drives(Qmp(Ours(), "query-block"));
  const json nodes = json(NodeNames(Qmp(Ours(), "query-named-block-nodes")));
  const std::string labels = Slurp(dir / "labels.json"), owner_a = Owner(a), owner_first = Owner(first);
  fs::create_directory(tmp() / "adir");
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"sdz", a}, 1, "No disk found whose source path or target is sdz"},
      {{"vda", a}, 1, "disk 'vda' is a disk, and only a cdrom's media can be changed"},
      {{(tmp() / "disk.img").string(), a}, 1, "disk 'vda' is a disk"},
      {{"sda", (tmp() / "nosuch.iso").string()}, 1, "Cannot access storage file '" + (tmp() / "nosuch.iso").string() +
                                                        "' for 'sda': No such file or directory"},
      {{"sda", (tmp() / "adir").string()}, 1, "it is neither a file nor a block device"},
      {{"sda", "--eject"}, 1, "The disk device 'sda' doesn't have media"},
      {{"sdb", a, "--insert"}, 1, "The disk device 'sdb' already has media"},
      {{"sdb", first, "--eject"}, 1, "--eject takes no FILE"},
      {{"sda"}, 1, "The disk device 'sda' doesn't have media"},  // --update without FILE ejects, as virsh
      {{"sda", "--insert"}, 1, "No source is specified for inserting media"},
      {{"sda", a, "--config"}, 1, "qlaunch keeps no stored definition"},
      {{"sda", a, "--eject", "--insert"}, 2, "change-media: --eject and --insert exclude each other"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"change-media", kName};
    args.insert(args.end(), c.args.begin(), c.args.end());
    RunResult r = Qlaunch(args);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.Describe();
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.Describe();
    EXPECT_EQ(Drives(Qmp(Ours(), "query-block")), block) << r.Describe();
    EXPECT_EQ(json(NodeNames(Qmp(Ours(), "query-named-block-nodes"))), nodes) << "a node leaked: " << r.Describe();
    EXPECT_EQ(Slurp(dir / "labels.json"), labels) << r.Describe();
    EXPECT_EQ(Owner(a), owner_a) << r.Describe();
    EXPECT_EQ(Owner(first), owner_first) << r.Describe();
    EXPECT_FALSE(fs::exists(dir / "running.xml")) << r.Describe();
  }
  RunResult unknown = Qlaunch({"change-media", "nosuch", "sda", a});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.Describe();
  EXPECT_NE(unknown.err.find("domain nosuch is not running"), std::string::npos) << unknown.Describe();
}

// The same XML under libvirt 9.0 and the same changes with `virsh change-media --live`: QEMU
// reports the same drives (file, node name, tray, read-only) after each step.
TEST_F(ChangeMediaTest, SameDrivesAsVirshChangeMedia) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (libvirt's qemu:///system)";
  if (const std::string& why = LibvirtUnreachable(); !why.empty()) GTEST_SKIP() << why;
  const std::string first = (tmp() / "first.iso").string(), a = (tmp() / "a.iso").string(),
                    bc = (tmp() / "b,c.iso").string();
  const std::vector<std::vector<std::string>> steps = {
      {"sda", a, "--insert"}, {first, bc, "--update"}, {"sda", "--eject"}, {"sda", a}, {"sdb", "--eject"}};
  auto run = [&](const Runner& cli, bool virsh) {
    json facts = json::array();
    facts.push_back(Drives(Qmp(cli, "query-block")));
    for (const auto& step : steps) {
      std::vector<std::string> args = {"change-media", kName};
      args.insert(args.end(), step.begin(), step.end());
      if (virsh) args.push_back("--live");
      RunResult r = cli(args);
      EXPECT_EQ(r.exit_code, 0) << r.Describe();
      json f = Drives(Qmp(cli, "query-block"));
      f["nodes"] = NodeNames(Qmp(cli, "query-named-block-nodes"));
      facts.push_back(f);
    }
    return facts;
  };
  Virsh({"destroy", kName});  // a leftover of an aborted run
  RunResult created = Virsh({"create", xml_});
  ASSERT_EQ(created.exit_code, 0) << created.Describe();
  const json libvirt = run([](const std::vector<std::string>& args) { return Virsh(args); }, true);
  ASSERT_EQ(Virsh({"destroy", kName}).exit_code, 0);
  // libvirt's side says something: its node names for the insert, and for the insert after
  // a change (5) and an eject (6), each of which took an index.
  ASSERT_EQ(libvirt.size(), steps.size() + 1);
  EXPECT_EQ(libvirt[1]["sata0-0-0"]["node"], "libvirt-4-format") << libvirt.dump();
  EXPECT_EQ(libvirt[4]["sata0-0-0"]["node"], "libvirt-7-format") << libvirt.dump();

  ASSERT_NO_FATAL_FAILURE(Start());
  const json ours = run(Ours(), false);
  ASSERT_EQ(libvirt.size(), ours.size());
  for (size_t i = 0; i < ours.size(); ++i)
    EXPECT_EQ(ours[i], libvirt[i]) << "after step " << i << "\n  libvirt: " << libvirt[i].dump()
                                   << "\n  qlaunch: " << ours[i].dump();
}

}  // namespace
}  // namespace qlaunch::testing
