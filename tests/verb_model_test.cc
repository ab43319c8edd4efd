// The pure part of the verb sequence tests (issue 34), without QEMU: the model's answers
// (support/verb_model.h), the seeded generator (support/verb_generator.h) and the shrinker
// (support/sequence_shrinker.h) against predicates standing in for a real guest.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "support/sequence_shrinker.h"
#include "support/verb_generator.h"
#include "support/verb_model.h"

namespace qlaunch::testing::seq {
namespace {

Sequence Seq(const std::string& text) {
  std::string error;
  std::optional<Sequence> s = ParseSequence(text, &error);
  EXPECT_TRUE(s.has_value()) << error;
  return s.value_or(Sequence{});
}

// The state after running `text` from the start, and whether every step was accepted.
std::pair<ModelState, bool> After(const std::string& text) {
  ModelState m = InitialState();
  bool all = true;
  for (const Step& s : Seq(text)) {
    const Outcome o = Apply(m, s);
    all = all && o.accepted;
    m = o.after;
  }
  return {m, all};
}

TEST(VerbModel, StepsPrintAndParseBack) {
  const std::string text =
      "suspend; resume; setvcpus 2; setmem 160; attach-disk; detach-disk; attach-nic; detach-nic; attach-dimm; "
      "detach-dimm; change-media a; change-media b; change-media eject; change-media vda; migrate; migrate-local; "
      "save; restore; destroy";
  const Sequence s = Seq(text);
  EXPECT_EQ(s.size(), 19u);
  EXPECT_EQ(SequenceText(s), text);
  std::set<Op> ops;
  for (const Step& step : s) ops.insert(step.op);
  EXPECT_EQ(ops.size(), kOpCount) << "every verb has a name";
  for (const char* bad : {"setvcpus", "setvcpus two", "suspend now", "change-media c", "reboot", "setmem -1"}) {
    std::string error;
    EXPECT_FALSE(ParseSequence(std::string("suspend; ") + bad, &error).has_value()) << bad;
    EXPECT_NE(error.find(bad), std::string::npos) << error;
  }
  EXPECT_EQ(ParseSequence(" ; suspend ;; ").value(), Sequence({{Op::kSuspend, 0}}));
}

TEST(VerbModel, FollowsTheVerbsItAccepts) {
  auto [m, all] = After("setvcpus 2; attach-disk; attach-dimm; change-media a; setmem 192; suspend; migrate");
  EXPECT_TRUE(all);
  EXPECT_EQ(m.life, Life::kPaused);
  EXPECT_EQ(m.host, 1u);
  EXPECT_EQ(m.vcpus, 2u);
  EXPECT_TRUE(m.disk && m.dimm && !m.nic);
  EXPECT_EQ(m.media, kImageA);
  EXPECT_EQ(m.balloon_mib, 192u);
  EXPECT_EQ(StateText(m), "paused on B, 2 vCPUs, balloon 192 MiB, disk vdb, DIMM, cdrom a");

  // Saved while paused: restored paused, on the host it was saved on, with its devices.
  std::tie(m, all) = After("attach-nic; suspend; migrate; save; restore");
  EXPECT_TRUE(all);
  EXPECT_EQ(m.life, Life::kPaused);
  EXPECT_EQ(m.host, 1u);
  EXPECT_TRUE(m.nic);
  // The no-ops the state table accepts.
  std::tie(m, all) = After("resume; suspend; suspend; migrate-local; change-media eject; setvcpus 1");
  EXPECT_TRUE(all);
  EXPECT_EQ(m.life, Life::kPaused);
}

TEST(VerbModel, RefusesWhatLibvirtRefusesAndChangesNothing) {
  struct Case {
    std::string before, step, why;
  };
  for (const Case& c : std::vector<Case>{
           {"", "setvcpus 3", "vCPU count out of range"},
           {"", "setvcpus 0", "vCPU count out of range"},
           {"setvcpus 2", "setvcpus 1", "no vCPU unplug under TCG"},
           {"setvcpus 2; suspend", "setvcpus 1", "no vCPU unplug under TCG"},
           {"", "setmem 257", "more than <memory>"},
           {"attach-dimm", "setmem 385", "more than <memory>"},
           {"", "detach-disk", "no vdb to detach"},
           {"attach-disk", "attach-disk", "attached already"},
           {"", "detach-nic", "no NIC to detach"},
           {"attach-dimm", "attach-dimm", "no free DIMM slot"},
           {"", "detach-dimm", "no DIMM to detach"},
           {"", "change-media vda", "not a removable disk"},
           {"", "restore", "no save file"},
           {"save; restore", "restore", "its domain is running"},
           {"save", "suspend", "not running"},
           {"save", "migrate", "not running"},
           {"save", "destroy", "not running"},
           {"save", "save", "not running"},
           {"destroy", "restore", "destroyed"},
       }) {
    const ModelState before = After(c.before).first;
    const Outcome o = Apply(before, *ParseStep(c.step));
    EXPECT_FALSE(o.accepted) << c.before << " / " << c.step;
    EXPECT_EQ(o.after, before) << c.step;
    EXPECT_NE(o.why.find(c.why), std::string::npos) << c.step << ": " << o.why;
  }
  // A DIMM's memory may be ballooned too: <memory> counts it.
  EXPECT_TRUE(Apply(After("attach-dimm").first, *ParseStep("setmem 384")).accepted);
}

TEST(VerbModel, TheBalloonsTargetCountsTheDimm) {
  EXPECT_EQ(After("setmem 224").first.balloon_mib, 224u);
  EXPECT_EQ(After("setmem 224; attach-dimm").first.balloon_mib, 352u);
  EXPECT_EQ(After("setmem 224; attach-dimm; detach-dimm").first.balloon_mib, 224u);
  EXPECT_EQ(After("attach-dimm; setmem 320; detach-dimm").first.balloon_mib, 192u);
  EXPECT_EQ(MemoryMib(After("attach-dimm").first), 384u);
}

TEST(VerbModel, AnUnplugFromAPausedGuestIsNotModelled) {
  const ModelState paused = After("attach-disk; attach-nic; attach-dimm; setvcpus 2; suspend").first;
  for (const char* step : {"detach-disk", "detach-nic", "detach-dimm"}) {
    const Outcome o = Apply(paused, *ParseStep(step));
    EXPECT_FALSE(o.modelled) << step;
    EXPECT_FALSE(o.accepted) << step;
    EXPECT_EQ(o.after, paused) << step;
    EXPECT_TRUE(Apply(After("attach-disk; attach-nic; attach-dimm; setvcpus 2").first, *ParseStep(step)).accepted) << step;
  }
  // Plugs and refusals are: the refusal comes before any guest is asked.
  EXPECT_TRUE(Apply(After("suspend").first, *ParseStep("setvcpus 2")).accepted);
  EXPECT_TRUE(Apply(After("suspend").first, *ParseStep("detach-disk")).modelled);
  EXPECT_FALSE(Modelled(Seq("attach-disk; suspend; detach-disk; resume")));
  EXPECT_TRUE(Modelled(Seq("attach-disk; suspend; resume; detach-disk")));
}

TEST(VerbModel, NormalizedStopsAtTheFirstDestroyTheModelAccepts) {
  EXPECT_EQ(SequenceText(Normalized(Seq("suspend; destroy; resume; save"))), "suspend; destroy");
  // A refused destroy (of a saved domain) ends nothing.
  EXPECT_EQ(SequenceText(Normalized(Seq("save; destroy; restore; destroy; save"))), "save; destroy; restore; destroy");
}

TEST(VerbGenerator, TheSameSeedGivesTheSameSequence) {
  for (uint64_t seed : {0ull, 1ull, 42ull, 0xfeedfacecafebeefull}) {
    EXPECT_EQ(Generate(seed, 8), Generate(seed, 8)) << seed;
    EXPECT_EQ(SequenceText(Generate(seed, 8)), SequenceText(Generate(seed, 8)));
  }
  // Pinned: a change of the generator changes what a printed seed reproduces, so it is seen here.
  EXPECT_EQ(SequenceText(Generate(1, 8)), "suspend; change-media a; attach-nic; setmem 192");
  std::set<std::string> distinct;
  for (uint64_t seed = 0; seed < 50; ++seed) distinct.insert(SequenceText(Generate(seed, 8)));
  EXPECT_GE(distinct.size(), 48u) << "seeds give different sequences";
  EXPECT_EQ(SequenceSeed(1000, 7), 1007u);
  Rng a(5), b(5), c(6);
  const uint64_t first = a.Next();
  EXPECT_EQ(first, b.Next());
  EXPECT_NE(first, c.Next());
}

TEST(VerbGenerator, WalksTheWholeTableMostlyWithAcceptedVerbs) {
  std::map<Op, size_t> accepted, refused;
  size_t steps = 0, refusals = 0, restores_after_save = 0, saves = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    const Sequence s = Generate(seed, 8);
    ASSERT_GE(s.size(), 1u);
    ASSERT_LE(s.size(), 8u);
    EXPECT_EQ(Normalized(s), s) << "nothing after destroy, seed " << seed;
    EXPECT_TRUE(Modelled(s)) << "no unplug from a paused guest, seed " << seed << ": " << SequenceText(s);
    if (s.back().op != Op::kDestroy) {
      EXPECT_GE(s.size(), 4u) << "at least half the length, seed " << seed;
    }
    ModelState m = InitialState();
    for (size_t i = 0; i < s.size(); ++i) {
      const Outcome o = Apply(m, s[i]);
      (o.accepted ? accepted : refused)[s[i].op]++;
      refusals += !o.accepted;
      if (m.life == Life::kSaved && o.accepted) ++restores_after_save;
      if (o.accepted && s[i].op == Op::kSave) ++saves;
      m = o.after;
      ++steps;
    }
  }
  for (size_t i = 0; i < kOpCount; ++i) {
    const Op op = static_cast<Op>(i);
    EXPECT_GT(accepted[op], 20u) << "accepted " << OpName(op);
    EXPECT_GT(refused[op], 5u) << "refused " << OpName(op);
  }
  // About one step in eight is refused (1/8 drawn as refusals; none of the others are).
  EXPECT_GT(refusals * 100, steps * 9);
  EXPECT_LT(refusals * 100, steps * 16);
  EXPECT_GT(restores_after_save * 10, saves * 7) << "a save is mostly followed by its restore";
}

TEST(SequenceShrinker, FindsTheMinimalSequenceOfAnOrderedBug) {
  // Fails when a hot-plugged vCPU and a disk are both there at a save that is then restored (the
  // shape of a restore bug), asked of the model as a runner would.
  auto fails = [](const Sequence& s) {
    ModelState m = InitialState();
    bool armed = false;
    for (const Step& step : s) {
      const Outcome o = Apply(m, step);
      if (o.accepted && step.op == Op::kSave) armed = m.vcpus == 2 && m.disk;
      if (o.accepted && step.op == Op::kRestore && armed) return true;
      m = o.after;
    }
    return false;
  };
  const Sequence failing =
      Seq("suspend; setvcpus 2; resume; attach-nic; change-media a; attach-disk; migrate-local; setmem 192; save; "
          "restore; migrate; detach-nic");
  ASSERT_TRUE(fails(failing));
  const ShrinkResult r = Shrink(failing, fails, 200);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(SequenceText(r.minimal), "setvcpus 2; attach-disk; save; restore");
  EXPECT_GT(r.runs, 0u);
  // 1-minimal: dropping any one step makes it pass.
  for (size_t i = 0; i < r.minimal.size(); ++i) {
    Sequence without = r.minimal;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    EXPECT_FALSE(fails(without)) << SequenceText(without);
  }
}

TEST(SequenceShrinker, AsksEachCandidateOnceAndStopsAtItsBudget) {
  std::multiset<std::string> asked;
  auto fails = [&](const Sequence& s) {
    asked.insert(SequenceText(s));
    for (const Step& step : s)
      if (step.op == Op::kMigrateLocal) return true;
    return false;
  };
  const Sequence failing = Seq("suspend; resume; attach-disk; migrate-local; detach-disk; save; restore; resume");
  const ShrinkResult r = Shrink(failing, fails, 100);
  EXPECT_EQ(SequenceText(r.minimal), "migrate-local");
  EXPECT_EQ(asked.size(), r.runs);
  for (const std::string& a : asked) EXPECT_EQ(asked.count(a), 1u) << a;
  EXPECT_EQ(asked.count(SequenceText(failing)), 0u) << "the failing sequence itself is not run again";

  const ShrinkResult cut = Shrink(failing, fails, 2);
  EXPECT_FALSE(cut.complete);
  EXPECT_EQ(cut.runs, 2u);
  EXPECT_TRUE(fails(cut.minimal)) << "what it returns still fails";
  int stops = 0;
  const ShrinkResult stopped = Shrink(failing, fails, 100, [&] { return ++stops > 1; });
  EXPECT_FALSE(stopped.complete);
  EXPECT_EQ(stopped.runs, 1u);
}

TEST(SequenceShrinker, ASingleStepOrADestroyEndsShrinking) {
  auto always = [](const Sequence&) { return true; };
  EXPECT_EQ(Shrink(Seq("save"), always, 10).runs, 0u);
  // Steps after an accepted destroy never run: shrinking starts from what can.
  const ShrinkResult r = Shrink(Seq("destroy; suspend; resume"), always, 10);
  EXPECT_EQ(SequenceText(r.minimal), "destroy");
  EXPECT_EQ(r.runs, 0u);
}

}  // namespace
}  // namespace qlaunch::testing::seq
