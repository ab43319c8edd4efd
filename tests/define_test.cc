// Defined domains on real QEMU 7.2 (TCG, 64 MiB of plain RAM), each test with its own
// QLAUNCH_CONFIG_DIR: define, start by name, destroy, start again, undefine while it runs (it runs
// on, transient); bad input refused with file and line and nothing half-written (a name taken, a
// uuid taken, an XML that does not validate, an unknown name, a definition renamed or garbled by
// hand); autostart where systemd is not PID 1; and `list --all` against `virsh list --all` of libvirt 9.0 for the same domains, defined both ways
// (one running, one shut off, one transient).
#include <sys/stat.h>

#include <map>
#include <regex>
#include <sstream>

#include "support/define_env.h"
#include "support/libvirt.h"

namespace qlaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST_F(DefineTest, DefineStartDestroyStartAgainUndefineWhileRunning) {
  const std::string name = "qldef-life", xml = Xml(name);
  RunResult def = Q({"define", xml});
  ASSERT_EQ(def.exit_code, 0) << def.Describe();
  EXPECT_EQ(def.out, "Domain '" + name + "' defined from " + xml + "\n");
  EXPECT_NE(def.err.find("not checked for a domain that is defined, not started: free hugepages, KVM"), std::string::npos)
      << def.err;
  // Kept root-only, with a generated <uuid> (as libvirt keeps one), the rest as given.
  const fs::path file = ConfigDir() / (name + ".xml");
  struct stat st {};
  ASSERT_EQ(::stat(ConfigDir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const std::string kept = Slurp(file);
  std::smatch uuid;
  ASSERT_TRUE(std::regex_search(kept, uuid, std::regex("<uuid>([0-9a-f-]{36})</uuid>"))) << kept;
  EXPECT_EQ(std::regex_replace(kept, std::regex("\n  <uuid>[0-9a-f-]{36}</uuid>"), ""), Slurp(xml));

  // Shut off: listed with --all only, dominfo and dumpxml from the definition.
  json e = Entry(name);
  ASSERT_TRUE(e.is_object()) << ListAll().dump();
  EXPECT_EQ(e["state"], "shut off");
  EXPECT_TRUE(e["pid"].is_null());
  EXPECT_EQ(e["persistent"], true);
  EXPECT_EQ(e["memory_bytes"], 64u << 20);
  EXPECT_EQ(Q({"list", "--json"}).out, "[]\n");
  RunResult info = Q({"dominfo", name});
  EXPECT_EQ(info.exit_code, 0) << info.Describe();
  EXPECT_NE(info.out.find("State:            shut off\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("UUID:             " + uuid[1].str() + "\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("Persistent:       yes\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("Autostart:        disable\n"), std::string::npos) << info.out;
  EXPECT_EQ(Q({"dumpxml", "--inactive", name}).out, kept);
  EXPECT_EQ(Q({"dumpxml", name}).out, kept);

  // Started by name, refused a second time, destroyed (shut off again), started again.
  pid_t first = 0;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("start " + std::to_string(round + 1));
    RunResult start = Q({"start", "--json", name});
    ASSERT_EQ(start.exit_code, 0) << start.Describe();
    e = Entry(name);
    EXPECT_EQ(e["state"], "running") << e.dump();
    EXPECT_EQ(e["persistent"], true);
    ASSERT_TRUE(e["pid"].is_number()) << e.dump();
    const pid_t qemu = e["pid"].get<pid_t>();
    EXPECT_NE(qemu, first);
    first = qemu;
    EXPECT_EQ(Slurp(DomainStateDir(name) / "domain.xml"), kept);
    RunResult again = Q({"start", name});
    EXPECT_EQ(again.exit_code, 1) << again.Describe();
    EXPECT_NE(again.err.find("already running"), std::string::npos) << again.err;
    if (round == 1) break;
    RunResult destroy = Q({"destroy", name});
    ASSERT_EQ(destroy.exit_code, 0) << destroy.Describe();
    ExpectGone(name, qemu);
    e = Entry(name);
    EXPECT_EQ(e["state"], "shut off") << e.dump();
  }

  // Undefined while it runs: it runs on, transient; once destroyed it is gone.
  RunResult undef = Q({"undefine", name});
  EXPECT_EQ(undef.exit_code, 0) << undef.Describe();
  EXPECT_EQ(undef.out, "Domain '" + name + "' has been undefined\n");
  EXPECT_FALSE(fs::exists(file));
  e = Entry(name);
  EXPECT_EQ(e["state"], "running") << e.dump();
  EXPECT_EQ(e["pid"], first);
  EXPECT_EQ(e["persistent"], false);
  EXPECT_NE(Q({"dominfo", name}).out.find("Persistent:       no\n"), std::string::npos);
  EXPECT_EQ(Q({"dumpxml", "--inactive", name}).out, kept);  // the XML it was started with
  ASSERT_EQ(Q({"destroy", name}).exit_code, 0);
  ExpectGone(name, first);
  EXPECT_EQ(ListAll(), json::array());
  RunResult gone = Q({"start", name});
  EXPECT_EQ(gone.exit_code, 1) << gone.Describe();
  EXPECT_NE(gone.err.find("cannot read " + name), std::string::npos) << gone.err;
  ExpectGone(name);
}

TEST_F(DefineTest, BadInputIsRefusedWithFileAndLineAndNothingHalfWritten) {
  const std::string name = "qldef-bad";
  // An XML that does not parse, one that does not validate: nothing defined, no file made.
  const fs::path broken = tmp() / "broken.xml";
  std::ofstream(broken) << "<domain type='qemu'>\n  <name>" << name << "</name>\n  <memory>64\n";
  RunResult r = Q({"define", broken.string()});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(broken.string() + ":4: error: malformed XML"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing defined"), std::string::npos) << r.err;
  const std::string semantic = Xml(name, 64, "  <cpu><numa><cell id='0' cpus='0-3' memory='64' unit='MiB'/></numa></cpu>\n");
  r = Q({"define", semantic});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(semantic + ":3: error: <cell>: CPU IDs in <numa> exceed the <vcpu> count"), std::string::npos)
      << r.err;
  EXPECT_TRUE(ConfigFiles().empty()) << ConfigFiles().size();

  // The name taken: refused as libvirt refuses it, with the uuid it has; the definition unchanged.
  const std::string xml = Xml(name);
  ASSERT_EQ(Q({"define", xml}).exit_code, 0);
  const fs::path file = ConfigDir() / (name + ".xml");
  const std::string kept = Slurp(file);
  std::smatch uuid;
  ASSERT_TRUE(std::regex_search(kept, uuid, std::regex("<uuid>([0-9a-f-]{36})</uuid>"))) << kept;
  r = Q({"define", Xml(name, 96)});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("qlaunch: error: domain '" + name + "' already exists with uuid " + uuid[1].str()),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Slurp(file), kept);
  // The same uuid replaces it; the uuid under another name is refused.
  const std::string bigger = std::regex_replace(kept, std::regex(">64<"), ">96<");
  {
    const fs::path in = tmp() / "bigger.xml";
    std::ofstream(in) << bigger;
    r = Q({"define", in.string()});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQ(Slurp(file), bigger);
    std::ofstream(in) << std::regex_replace(bigger, std::regex("<name>" + name + "</name>"), "<name>qldef-other</name>");
    r = Q({"define", in.string()});
    EXPECT_EQ(r.exit_code, 1) << r.Describe();
    EXPECT_NE(r.err.find("domain '" + name + "' is already defined with uuid " + uuid[1].str()), std::string::npos)
        << r.err;
  }
  EXPECT_EQ(ConfigFiles(), (std::set<std::string>{".lock", name + ".xml"}));

  // Unknown names.
  for (const char* verb : {"undefine", "edit", "autostart", "dominfo"}) {
    r = Q({verb, "qldef-nosuch"});
    EXPECT_EQ(r.exit_code, 1) << verb << ": " << r.Describe();
  }
  EXPECT_NE(Q({"undefine", "qldef-nosuch"}).err.find("domain 'qldef-nosuch' is not defined (no " +
                                                     (ConfigDir() / "qldef-nosuch.xml").string() + ")"),
            std::string::npos);

  // A definition renamed by hand: not started under the other name.
  std::ofstream(file) << std::regex_replace(bigger, std::regex("<name>" + name + "</name>"), "<name>qldef-other</name>");
  r = Q({"start", name});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(file.string() + ":2: error: <name>: the definition of '" + name +
                       "' names domain 'qldef-other' (changed by hand?)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(DomainStateDir("qldef-other")));

  // A definition garbled by hand: start and dominfo name its file and line; it is still listed.
  std::ofstream(file) << "<domain type='qemu'>\n  <name>" << name << "</name>\n  <memory unit='MiB'>64</memory\n";
  r = Q({"start", name});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(file.string() + ":4: error: malformed XML"), std::string::npos) << r.err;
  r = Q({"dominfo", name});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find(file.string() + ":4: error: malformed XML"), std::string::npos) << r.err;
  json e = Entry(name);
  EXPECT_EQ(e["state"], "shut off") << e.dump();
  EXPECT_EQ(e["memory_bytes"], 0u);
  ExpectGone(name);
}


TEST_F(DefineTest, AutostartIsMarkedAndSaysWhatToDoWithoutSystemd) {
  const std::string name = "qldef-auto";
  ASSERT_EQ(Q({"define", Xml(name)}).exit_code, 0);
  ASSERT_EQ(Q({"define", Xml("qldef-manual")}).exit_code, 0);
  RunResult r = Q({"autostart", name});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "Domain '" + name + "' marked as autostarted\n");
  const bool systemd = fs::is_directory("/run/systemd/system");
  if (!systemd) {
    EXPECT_NE(r.err.find("systemd is not PID 1 on this host"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("qlaunch@qldef\\x2dauto.service was not"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("`qlaunch start " + name + "` at boot"), std::string::npos) << r.err;
  }
  EXPECT_EQ(Q({"list", "--all", "--autostart", "--name"}).out, name + "\n");
  EXPECT_EQ(Q({"list", "--all", "--name"}).out, name + "\nqldef-manual\n");
  EXPECT_NE(Q({"dominfo", name}).out.find("Autostart:        enable\n"), std::string::npos);
  r = Q({"autostart", "--disable", name});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "Domain '" + name + "' unmarked as autostarted\n");
  EXPECT_EQ(Q({"list", "--all", "--autostart", "--name"}).out, "");
  // undefine takes the mark with it.
  ASSERT_EQ(Q({"autostart", name}).exit_code, 0);
  ASSERT_EQ(Q({"undefine", name}).exit_code, 0);
  EXPECT_EQ(ConfigFiles(), (std::set<std::string>{".lock", "autostart", "qldef-manual.xml"}));
}

// `virsh list --all` and `qlaunch list --all` of the same three domains: one defined and running,
// one defined and shut off, one transient (virsh create / qlaunch start FILE).
class DefineVsVirshTest : public DefineTest {
 protected:
  void SetUp() override {
    DefineTest::SetUp();
    if (IsSkipped()) return;
    if (const std::string& why = LibvirtUnreachable(); !why.empty()) GTEST_SKIP() << why;
    CleanLibvirt();
  }
  void TearDown() override {
    CleanLibvirt();
    DefineTest::TearDown();
  }
  void CleanLibvirt() {
    for (const char* n : kNames) {
      Virsh({"destroy", n});
      Virsh({"undefine", n});
    }
  }
  static constexpr const char* kNames[] = {"qldef-cmp-on", "qldef-cmp-off", "qldef-cmp-transient"};

  struct Row {
    std::string id, name, state;
  };
  // The rows of a `virsh list` table or of qlaunch's (its first columns: pid, name, state).
  static std::vector<Row> Rows(const std::string& table) {
    std::vector<Row> rows;
    std::istringstream in(table);
    std::string line;
    std::getline(in, line);  // header
    std::getline(in, line);  // -----
    const std::regex row("^ (\\S+)\\s+(\\S+)\\s+(running|paused|shut off|idle|starting)\\b.*$");
    while (std::getline(in, line)) {
      std::smatch m;
      if (line.empty()) continue;
      EXPECT_TRUE(std::regex_match(line, m, row)) << "'" << line << "' in\n" << table;
      if (!m.empty()) rows.push_back({m[1], m[2], m[3]});
    }
    return rows;
  }
};

TEST_F(DefineVsVirshTest, ListAllShowsWhatVirshListAllShows) {
  for (const char* n : {"qldef-cmp-on", "qldef-cmp-off"}) {
    const std::string xml = Xml(n);
    RunResult v = Virsh({"define", xml});
    ASSERT_EQ(v.exit_code, 0) << v.Describe();
    RunResult q = Q({"define", xml});
    ASSERT_EQ(q.exit_code, 0) << q.Describe();
  }
  const std::string transient = Xml("qldef-cmp-transient");
  ASSERT_EQ(Virsh({"start", "qldef-cmp-on"}).exit_code, 0);
  ASSERT_EQ(Virsh({"create", transient}).exit_code, 0);
  ASSERT_EQ(Q({"start", "qldef-cmp-on"}).exit_code, 0);
  ASSERT_EQ(Q({"start", transient}).exit_code, 0);

  RunResult v = Virsh({"list", "--all"});
  ASSERT_EQ(v.exit_code, 0) << v.Describe();
  RunResult q = Q({"list", "--all"});
  ASSERT_EQ(q.exit_code, 0) << q.Describe();
  // libvirt may list domains of others: only ours are compared.
  auto ours = [](std::vector<Row> rows) {
    std::erase_if(rows, [](const Row& r) { return !r.name.starts_with("qldef-cmp-"); });
    return rows;
  };
  const std::vector<Row> vr = ours(Rows(v.out)), qr = ours(Rows(q.out));
  ASSERT_EQ(vr.size(), 3u) << v.out;
  ASSERT_EQ(qr.size(), vr.size()) << "virsh:\n" << v.out << "qlaunch:\n" << q.out;
  // The running ones first (virsh by id, qlaunch by name: compared as sets), then the shut-off ones.
  std::map<std::string, std::string> vstate, qstate;
  for (size_t i = 0; i < vr.size(); ++i) {
    vstate[vr[i].name] = vr[i].state;
    qstate[qr[i].name] = qr[i].state;
    EXPECT_EQ(vr[i].state == "shut off", qr[i].state == "shut off") << "row " << i << "\n" << v.out << q.out;
    EXPECT_EQ(vr[i].id == "-", qr[i].id == "-") << "row " << i << "\n" << v.out << q.out;
  }
  EXPECT_EQ(qstate, vstate) << "virsh:\n" << v.out << "qlaunch:\n" << q.out;
  EXPECT_EQ(qstate["qldef-cmp-off"], "shut off");
  EXPECT_EQ(qr.back().name, "qldef-cmp-off");
  EXPECT_EQ(vr.back().name, "qldef-cmp-off");

  // Without --all, both list the running ones alone.
  std::set<std::string> vrun, qrun;
  for (const Row& r : ours(Rows(Virsh({"list"}).out))) vrun.insert(r.name);
  for (const Row& r : ours(Rows(Q({"list"}).out))) qrun.insert(r.name);
  EXPECT_EQ(qrun, vrun);
  EXPECT_EQ(qrun, (std::set<std::string>{"qldef-cmp-on", "qldef-cmp-transient"}));

  // dominfo of the shut-off one: what virsh says of it.
  RunResult vi = Virsh({"dominfo", "qldef-cmp-off"}), qi = Q({"dominfo", "--json", "qldef-cmp-off"});
  ASSERT_EQ(qi.exit_code, 0) << qi.Describe();
  const json info = json::parse(qi.out, nullptr, false);
  auto field = [&](const std::string& key) {
    std::smatch m;
    return std::regex_search(vi.out, m, std::regex(key + ":\\s+(.*)")) ? m[1].str() : std::string("?");
  };
  EXPECT_EQ(field("Id"), "-");
  EXPECT_TRUE(info["pid"].is_null());
  EXPECT_EQ(field("State"), info["state"].get<std::string>());
  EXPECT_EQ(field("CPU\\(s\\)"), std::to_string(info["vcpus"].get<unsigned>()));
  EXPECT_EQ(field("Max memory"), std::to_string(info["memory_bytes"].get<uint64_t>() >> 10) + " KiB");
  EXPECT_EQ(field("Persistent"), info["persistent"] ? "yes" : "no");
  EXPECT_EQ(field("Autostart"), info["autostart"] ? "enable" : "disable");

  for (const char* n : {"qldef-cmp-on", "qldef-cmp-transient"}) ASSERT_EQ(Q({"destroy", n}).exit_code, 0);
  ExpectGone("qldef-cmp-on");
  ExpectGone("qldef-cmp-transient");
}

}  // namespace
}  // namespace qlaunch::testing
