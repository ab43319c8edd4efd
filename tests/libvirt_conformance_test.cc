// libvirt's own test corpus (tests/fixtures/libvirt): every XML parses or is refused for
// libvirt's reason, and for accepted cases our memory backends, -numa options and mem-lock match
// libvirt's expected args semantically on libvirt's fake 4-node host. The differences we intend
// are listed in docs/libvirt-differences.md and encoded in Compare() below; anything else fails.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/memory_totals.h"
#include "domain/parser.h"
#include "domain/validate.h"
#include "numa/host_topology.h"
#include "qemu_cmd/caps.h"
#include "qemu_cmd/planner.h"
#include "support/backend_compare.h"
#include "support/libvirt_args.h"
#include "support/libvirt_corpus.h"
#include "support/gtest_name.h"

namespace qlaunch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::LibvirtCorpusCases;

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

using testing::LibvirtHost;

qemu::QemuCaps Caps72() {
  std::ifstream in(std::string(QLAUNCH_SOURCE_DIR) + "/tests/fixtures/caps/qemu-7.2.json");
  return json::parse(in).get<qemu::QemuCaps>();
}

std::vector<std::string> Cases(const char* suffix) {
  std::vector<std::string> out;
  for (const std::string& f : testing::LibvirtCorpusFiles(suffix)) {
    std::string name = f.substr(0, f.size() - strlen(suffix));
    // hugepages-nodeset ships its expected args without its XML (see SOURCES.md): nothing to plan.
    if (fs::exists(LibvirtCorpusCases() / (name + ".xml"))) out.push_back(name);
  }
  return out;
}

std::string CasePath(const std::string& name, const char* suffix) { return LibvirtCorpusCases() / (name + suffix); }

// Difference 1: libvirt accepts these and silently replaces <memory> by the cells' sum plus the
// memory devices; qlaunch refuses the mismatch. They are compared after making that fix-up.
const std::set<std::string>& kMemoryMismatch = testing::LibvirtMemoryMismatchCases();

// Plans a case the way `qlaunch domxml-to-native --prealloc qemu` does (difference 7: QEMU preallocates, as under
// libvirt; auto would hand shared hugetlb memfds to qlaunch's preallocator, which libvirt has not);
// throws DiagnosticError when refused.
qemu::LaunchPlan PlanCase(const std::string& name) {
  domain::DomainDef def = domain::ParseDomainFile(CasePath(name, ".xml"));
  auto problems = domain::ValidateDomain(def);
  if (kMemoryMismatch.contains(name)) {
    EXPECT_TRUE(HasErrors(problems)) << name << ": the <memory> mismatch must be refused";
    EXPECT_NE(std::string(DiagnosticError(problems).what()).find("but the NUMA cells add up to"), std::string::npos);
    def.memory_bytes = domain::TotalMemoryBytes(def);  // what libvirt does silently
    problems = domain::ValidateDomain(def);
  }
  if (HasErrors(problems)) throw DiagnosticError(problems);
  qemu::PlanOptions opts;
  opts.qmp_socket = "/run/qlaunch/" + def.name + "/qmp.sock";
  opts.prealloc = qemu::PreallocMode::kQemu;
  return qemu::PlanLaunch(def, LibvirtHost(), Caps72(), opts);
}

uint64_t PageSizeOf(const json& obj) {
  if (obj["qom-type"] == "memory-backend-memfd") return obj.value("hugetlbsize", uint64_t{0});
  std::string path = obj.value("mem-path", "");
  if (path.starts_with("/dev/hugepages2M")) return 2 * kMiB;
  if (path.starts_with("/dev/hugepages1G")) return kGiB;
  return 0;
}

std::vector<unsigned> NodesOf(const json& obj, const char* key) {
  return obj.contains(key) ? obj[key].get<std::vector<unsigned>>() : std::vector<unsigned>{};
}

TEST(LibvirtConformance, CorpusIsPresent) {
  ASSERT_TRUE(fs::is_directory(LibvirtCorpusCases())) << "libvirt corpus missing: " << LibvirtCorpusCases();
  EXPECT_GE(Cases(".x86_64-latest.args").size(), 30u);
  EXPECT_GE(Cases(".x86_64-latest.err").size(), 5u);
  // The one case whose XML is missing from the corpus, so the suites below cannot cover it.
  EXPECT_FALSE(fs::exists(CasePath("hugepages-nodeset", ".xml")));
  EXPECT_TRUE(fs::exists(CasePath("hugepages-nodeset", ".x86_64-latest.args")));
}

class AcceptedCase : public ::testing::TestWithParam<std::string> {};

TEST_P(AcceptedCase, BackendsNumaAndMemLockMatchLibvirt) {
  const std::string name = GetParam();
  testing::LibvirtArgs expected = testing::ReadLibvirtArgs(CasePath(name, ".x86_64-latest.args"));
  qemu::LaunchPlan plan = PlanCase(name);

  std::map<std::string, json> contexts;
  std::vector<json> backends;
  for (const json& o : expected.JsonObjects()) {
    std::string type = o["qom-type"];
    if (type == "thread-context") contexts[o["id"]] = o;
    if (type.starts_with("memory-backend-")) backends.push_back(o);
  }
  ASSERT_EQ(plan.backends.size(), backends.size()) << name;
  std::map<std::string, const qemu::ThreadContext*> our_contexts;
  for (const auto& c : plan.contexts) our_contexts[c.id] = &c;

  for (const json& want : backends) {
    SCOPED_TRACE(name + " backend " + want["id"].get<std::string>());
    auto it = std::find_if(plan.backends.begin(), plan.backends.end(),
                           [&](const qemu::MemoryBackend& b) { return b.id == want["id"]; });
    ASSERT_NE(it, plan.backends.end());
    const qemu::MemoryBackend& got = *it;
    EXPECT_EQ(std::string("memory-backend-") + qemu::ToString(got.type), want["qom-type"].get<std::string>());
    EXPECT_EQ(got.size_bytes, want["size"].get<uint64_t>());
    EXPECT_EQ(got.page_size_bytes, PageSizeOf(want));
    if (want.contains("share")) {
      ASSERT_TRUE(got.share_explicit.has_value());
      EXPECT_EQ(*got.share_explicit, want["share"].get<bool>());
    } else {
      EXPECT_FALSE(got.share_explicit.has_value());
    }
    EXPECT_EQ(got.prealloc == qemu::PreallocBy::kQemu, want.value("prealloc", false));
    // We always size prealloc-threads (difference 3); where libvirt sets it, we agree.
    if (want.contains("prealloc-threads")) {
      EXPECT_EQ(got.prealloc_threads, want["prealloc-threads"].get<unsigned>());
    }
    EXPECT_EQ(got.host_nodes.Ids(), NodesOf(want, "host-nodes"));
    EXPECT_EQ(got.policy, want.value("policy", ""));
    if (want.contains("prealloc-context")) {
      // Where libvirt gives a thread-context, so do we (difference 2: we also give one where it does not).
      ASSERT_FALSE(got.thread_context.empty());
      const json& ctx = contexts.at(want["prealloc-context"]);
      IdSet libvirt_affinity(NodesOf(ctx, "node-affinity"));
      IdSet ours = our_contexts.at(got.thread_context)->node_affinity;
      // Difference 4: libvirt narrows by <vcpu cpuset> (the emulator's default pinning); we do not pin
      // the emulator, so ours may be wider, but never narrower.
      EXPECT_TRUE(libvirt_affinity.IsSubsetOf(ours)) << ours.ToString() << " vs " << libvirt_affinity.ToString();
      if (name != "memory-hotplug-dimm-addr") {
        EXPECT_EQ(ours, libvirt_affinity);
      }
    }
    if (got.prealloc == qemu::PreallocBy::kQemu) {
      EXPECT_FALSE(got.thread_context.empty()) << "difference 2";
    }
  }

  // The rendered -object of each backend against libvirt's, every key either side sets (the
  // differential test's comparison, with the same numbered differences).
  std::map<std::string, json> rendered;
  for (size_t i = 0; i + 1 < plan.argv.size(); ++i)
    if (plan.argv[i] == "-object" && plan.argv[i + 1].starts_with("{")) {
      json o = json::parse(plan.argv[i + 1]);
      if (o.value("qom-type", "").starts_with("memory-backend-")) rendered[o["id"]] = o;
    }
  for (const json& want : backends) {
    const std::string id = want["id"];
    ASSERT_TRUE(rendered.contains(id)) << name << ": no rendered -object for backend " << id;
    for (const std::string& d : testing::BackendObjectDifferences(id, want, rendered.at(id))) ADD_FAILURE() << name << ": " << d;
  }

  // -numa node options are identical strings.
  std::vector<std::string> our_numa;
  for (size_t i = 0; i + 1 < plan.argv.size(); ++i)
    if (plan.argv[i] == "-numa") our_numa.push_back(plan.argv[i + 1]);
  EXPECT_EQ(our_numa, expected.Values("-numa")) << name;

  // -overcommit mem-lock and the machine's memory-backend wiring.
  auto flag = [&](const std::vector<std::string>& argv, const std::string& opt) {
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == opt) return argv[i + 1];
    return std::string();
  };
  std::vector<std::string> libvirt_flat;
  for (const auto& [o, v] : expected.options) {
    libvirt_flat.push_back(o);
    libvirt_flat.push_back(v);
  }
  EXPECT_EQ(flag(plan.argv, "-overcommit"), flag(libvirt_flat, "-overcommit")) << name;
  EXPECT_EQ(flag(plan.argv, "-m"), flag(libvirt_flat, "-m")) << name;

  // Memory devices: libvirt's JSON -device against ours, property by property.
  std::vector<json> libvirt_dimms, our_dimms;
  for (const auto& v : expected.Values("-device"))
    if (v.starts_with("{") && json::parse(v)["driver"].get<std::string>().find("dimm") != std::string::npos)
      libvirt_dimms.push_back(json::parse(v));
  for (size_t i = 0; i + 1 < plan.argv.size(); ++i)
    if (plan.argv[i] == "-device" && plan.argv[i + 1].find("dimm") != std::string::npos)
      our_dimms.push_back(testing::DeviceToJson(plan.argv[i + 1]));
  EXPECT_EQ(our_dimms, libvirt_dimms) << name;
  bool libvirt_pcram = flag(libvirt_flat, "-machine").find("memory-backend=pc.ram") != std::string::npos;
  bool our_pcram = flag(plan.argv, "-machine").find("memory-backend=pc.ram") != std::string::npos;
  EXPECT_EQ(our_pcram, libvirt_pcram) << name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, AcceptedCase, ::testing::ValuesIn(Cases(".x86_64-latest.args")),
                         [](const auto& info) { return testing::GtestName(info.param); });

class RefusedCase : public ::testing::TestWithParam<std::string> {};

TEST_P(RefusedCase, RefusedForLibvirtsReason) {
  const std::string name = GetParam();
  std::ifstream in(CasePath(name, ".x86_64-latest.err"));
  std::string reason;
  std::getline(in, reason);
  ASSERT_FALSE(reason.empty()) << CasePath(name, ".x86_64-latest.err") << " gives no reason: any error would contain it";
  // libvirt prefixes its error class; the reason follows it.
  for (const char* prefix : {"XML error: ", "unsupported configuration: ", "internal error: "})
    if (reason.starts_with(prefix)) reason = reason.substr(strlen(prefix));
  ASSERT_FALSE(reason.empty()) << "libvirt's reason is only its error class";
  try {
    PlanCase(name);
    FAIL() << name << " was accepted; libvirt refuses it with: " << reason;
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(name + ".xml"), std::string::npos) << "error must name the file";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, RefusedCase, ::testing::ValuesIn(Cases(".x86_64-latest.err")),
                         [](const auto& info) { return testing::GtestName(info.param); });

}  // namespace
}  // namespace qlaunch
