// libvirt 9.0's own test cases (tests/support/libvirt_corpus.h: read from the unpacked source
// package scripts/setup fetches): every case libvirt refuses is refused for libvirt's reason, and
// for every case it accepts with its newest QEMU capabilities (<name>.x86_64-latest.args) our
// memory backends, thread-contexts, -numa options, -m, DIMMs and mem-lock match libvirt's expected
// args semantically on libvirt's test host. The cases whose expectation is for older capability
// flags are tests/libvirt_legacy_caps_test.cc. The differences we intend are listed in
// docs/libvirt-differences.md and encoded below; anything else fails.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "qemu_cmd/planner.h"
#include "support/backend_compare.h"
#include "support/gtest_name.h"
#include "support/libvirt_args.h"
#include "support/libvirt_corpus.h"
#include "support/libvirt_plan.h"
#include "support/slurp.h"

namespace qlaunch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::LibvirtCaseOf;
using testing::LibvirtCases;
using testing::LibvirtExpect;
using testing::NodesOf;

TEST(LibvirtConformance, CorpusIsPresent) {
  ASSERT_EQ(testing::LibvirtCorpusProblem(), "");
  EXPECT_GE(LibvirtCases(LibvirtExpect::kArgs).size(), 20u);
  EXPECT_GE(LibvirtCases(LibvirtExpect::kLegacyArgs).size(), 10u);
  EXPECT_GE(LibvirtCases(LibvirtExpect::kError).size(), 5u);
  // Every listed case is in libvirt 9.0's data, if only as an XML.
  for (const std::string& name : testing::LibvirtCaseNames())
    EXPECT_NE(LibvirtCaseOf(name).expect, LibvirtExpect::kMissing) << name << ": no " << LibvirtCaseOf(name).xml;
}

class AcceptedCase : public ::testing::TestWithParam<std::string> {};

TEST_P(AcceptedCase, BackendsNumaAndMemLockMatchLibvirt) {
  const std::string name = GetParam();
  ASSERT_EQ(testing::LibvirtCorpusProblem(), "");
  testing::LibvirtArgs expected = testing::ReadLibvirtArgs(LibvirtCaseOf(name).expected);
  qemu::LaunchPlan plan = testing::PlanLibvirtCase(name);

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
    EXPECT_EQ(got.page_size_bytes, testing::BackendPageSize(want));
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
      // libvirt 9.0 gives the context the backend's host-nodes; so do we here (no <emulatorpin>).
      EXPECT_EQ(ours, libvirt_affinity);
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
  // libvirt 9.0 writes -m in MiB ("-m 214") where it has no slots, newer ones in KiB ("size=219136k").
  EXPECT_EQ(testing::ParseMemoryOption(flag(plan.argv, "-m")), testing::ParseMemoryOption(flag(libvirt_flat, "-m")))
      << name << ": " << flag(plan.argv, "-m") << " vs " << flag(libvirt_flat, "-m");

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

INSTANTIATE_TEST_SUITE_P(Corpus, AcceptedCase, ::testing::ValuesIn(LibvirtCases(LibvirtExpect::kArgs)),
                         [](const auto& info) { return testing::GtestName(info.param); });

class RefusedCase : public ::testing::TestWithParam<std::string> {};

TEST_P(RefusedCase, RefusedForLibvirtsReason) {
  const std::string name = GetParam();
  ASSERT_EQ(testing::LibvirtCorpusProblem(), "");
  const fs::path err = LibvirtCaseOf(name).expected;
  const std::string reason = testing::LibvirtReason(testing::Slurp(err));
  ASSERT_FALSE(reason.empty()) << err << " gives no reason beyond its error class: any error would contain it";
  try {
    testing::PlanLibvirtCase(name);
    FAIL() << name << " was accepted; libvirt refuses it with: " << reason;
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(name + ".xml"), std::string::npos) << "error must name the file";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, RefusedCase, ::testing::ValuesIn(LibvirtCases(LibvirtExpect::kError)),
                         [](const auto& info) { return testing::GtestName(info.param); });

}  // namespace
}  // namespace qlaunch
