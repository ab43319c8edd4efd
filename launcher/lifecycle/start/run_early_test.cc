#include "launcher/lifecycle/start/run_early.h"

#include <gtest/gtest.h>

#include "qemu_cmd/planner.h"
#include "tests/support/plan_fixtures.h"

namespace qlaunch::launcher {
namespace {

using namespace qlaunch::testing;
using domain::AllocMode;
using domain::MemAccess;
using domain::MemSource;

constexpr uint64_t kGiB = 1ull << 30;

// Two cells of shared memfd memory, preallocated (<allocation mode='immediate'/>), on 2M pages
// unless `hugepages` is false.
domain::DomainDef Domain(bool hugepages, MemAccess access = MemAccess::kShared) {
  auto d = MakeDomain();
  SetCells(d, {Cell(0, IdSet{0}, kGiB), Cell(1, IdSet{1}, kGiB)});
  d.memory_backing.present = true;
  d.memory_backing.line = 5;
  d.memory_backing.source = MemSource::kMemfd;
  d.memory_backing.access = access;
  d.memory_backing.allocation = AllocMode::kImmediate;
  d.memory_backing.allocation_line = 8;
  if (hugepages) SetHugepages(d, {Page(kPage2M)});
  return d;
}

TEST(RunEarlyRefusal, OnlySharedHugetlbMemfdsFilledByQlaunch) {
  struct Case {
    const char* name;
    domain::DomainDef def;
    qemu::QemuCaps caps;
    qemu::PreallocMode mode;
    const char* refusal;  // "" = allowed; else a part of the message
    int line;
  };
  auto locked = Domain(true);
  locked.memory_backing.locked = true;
  auto plain = MakeDomain();  // nothing to preallocate: nothing to wait for either
  const Case cases[] = {
      {"2M shared memfd, auto, 7.2", Domain(true), Caps72(), qemu::PreallocMode::kAuto, "", 0},
      {"2M shared memfd, auto, 5.2", Domain(true), Caps52(), qemu::PreallocMode::kAuto, "", 0},
      {"2M shared memfd, launcher", Domain(true), Caps72(), qemu::PreallocMode::kLauncher, "", 0},
      {"plain RAM, nothing preallocated", plain, Caps72(), qemu::PreallocMode::kAuto, "", 0},
      {"--prealloc qemu", Domain(true), Caps72(), qemu::PreallocMode::kQemu, "is preallocated by QEMU", 8},
      {"private memory", Domain(true, MemAccess::kPrivate), Caps72(), qemu::PreallocMode::kAuto,
       "is preallocated by QEMU", 8},
      {"4K shared memfd, launcher", Domain(false), Caps72(), qemu::PreallocMode::kLauncher, "4 KiB pages", 5},
      {"4K shared memfd, auto, 7.2", Domain(false), Caps72(), qemu::PreallocMode::kAuto, "is preallocated by QEMU", 8},
      {"<locked/>", locked, Caps72(), qemu::PreallocMode::kAuto, "<locked/>", 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    qemu::PlanOptions opts;
    opts.prealloc = c.mode;
    const qemu::LaunchPlan plan = qemu::PlanLaunch(c.def, TwoNodeHost(), c.caps, opts);
    std::optional<Diagnostic> d = RunEarlyRefusal(plan, c.def);
    if (!*c.refusal) {
      EXPECT_FALSE(d) << d->ToString();
      continue;
    }
    ASSERT_TRUE(d);
    EXPECT_NE(d->message.find(c.refusal), std::string::npos) << d->message;
    EXPECT_NE(d->message.find("--run-early"), std::string::npos) << d->message;
    EXPECT_EQ(d->file, "vm1.xml");
    EXPECT_EQ(d->line, c.line);
  }
}

}  // namespace
}  // namespace qlaunch::launcher
