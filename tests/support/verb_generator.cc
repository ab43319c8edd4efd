#include "support/verb_generator.h"

#include <algorithm>

namespace qlaunch::testing::seq {

namespace {

struct Weighted {
  Step step;
  unsigned weight;
};

Step PickWeighted(const std::vector<Weighted>& options, Rng& rng) {
  unsigned total = 0;
  for (const Weighted& w : options) total += w.weight;
  uint64_t at = rng.Below(total);
  for (const Weighted& w : options) {
    if (at < w.weight) return w.step;
    at -= w.weight;
  }
  return options.back().step;
}

// One of `values` other than `now` (there is always one: the lists have two or more).
unsigned OtherThan(const std::vector<unsigned>& values, unsigned now, Rng& rng) {
  std::vector<unsigned> others;
  for (unsigned v : values)
    if (v != now) others.push_back(v);
  return others[rng.Below(others.size())];
}

// A verb the state accepts. A no-op (suspend of a paused domain, resume of a running one) now
// and then: the table accepts both, as libvirt does.
Step Accepted(const ModelState& m, const Limits& limits, Rng& rng) {
  if (m.life == Life::kSaved) return {Op::kRestore, 0};
  std::vector<unsigned> vcpu_counts;
  for (unsigned n = 1; n <= limits.max_vcpus; ++n) vcpu_counts.push_back(n);
  // At most 64 MiB held back: the guest's kernel allocates from its first 256 MiB only (a DIMM is
  // onlined movable), and with less its buffer and busybox run out of memory (seen at 160 MiB
  // of 384 with the DIMM: the guest panicked in the OOM killer).
  const unsigned memory = MemoryMib(m, limits);
  const std::vector<unsigned> balloon = {memory - 64, memory - 32, memory};
  const bool running = m.life == Life::kRunning;
  // A paused guest cannot answer an unplug (verb_model.h): only plugs then.
  const unsigned unplug = running ? 3 : 0;
  const unsigned vcpus = OtherThan(vcpu_counts, m.vcpus, rng);
  std::vector<Weighted> options = {
      {{Op::kSuspend, 0}, running ? 3u : 1u},
      {{Op::kResume, 0}, running ? 1u : 5u},
      {{Op::kSetvcpus, vcpus}, vcpus > m.vcpus ? 3 : unplug},
      {{Op::kSetmem, OtherThan(balloon, m.balloon_mib, rng)}, 3},
      {{m.disk ? Op::kDetachDisk : Op::kAttachDisk, 0}, m.disk ? unplug : 3},
      {{m.nic ? Op::kDetachNic : Op::kAttachNic, 0}, m.nic ? unplug : 3},
      {{m.dimm ? Op::kDetachDimm : Op::kAttachDimm, 0}, m.dimm ? unplug : 3},
      {{Op::kChangeMedia, OtherThan({kEject, kImageA, kImageB}, m.media, rng)}, 3},
      {{Op::kMigrate, 0}, 3},
      {{Op::kMigrateLocal, 0}, 3},
      {{Op::kSave, 0}, 3},
      {{Op::kDestroy, 0}, 1},
  };
  return PickWeighted(options, rng);
}

// A verb the state refuses.
Step Refused(const ModelState& m, const Limits& limits, Rng& rng) {
  std::vector<Step> options;
  if (m.life == Life::kSaved) {
    options = {{Op::kSuspend, 0}, {Op::kResume, 0},      {Op::kSetvcpus, limits.max_vcpus}, {Op::kSetmem, limits.memory_mib},
               {Op::kAttachDisk, 0}, {Op::kChangeMedia, kImageA}, {Op::kMigrate, 0}, {Op::kMigrateLocal, 0},
               {Op::kSave, 0},    {Op::kDestroy, 0}};
  } else {
    options = {{Op::kSetvcpus, limits.max_vcpus + 1}, {Op::kSetmem, 4 * (limits.memory_mib + limits.dimm_mib)},
               {Op::kChangeMedia, kBootDisk}, {Op::kRestore, 0}};
    if (m.disk) options.push_back({Op::kAttachDisk, 0});
    if (!m.disk) options.push_back({Op::kDetachDisk, 0});
    if (m.nic) options.push_back({Op::kAttachNic, 0});
    if (!m.nic) options.push_back({Op::kDetachNic, 0});
    if (m.dimm) options.push_back({Op::kAttachDimm, 0});
    if (!m.dimm) options.push_back({Op::kDetachDimm, 0});
  }
  return options[rng.Below(options.size())];
}

}  // namespace

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Sequence Generate(uint64_t seed, size_t max_len, const Limits& limits) {
  Rng rng(seed);
  Sequence seq;
  if (max_len == 0) return seq;
  const size_t shortest = std::max<size_t>(1, max_len / 2);
  const size_t len = shortest + rng.Below(max_len - shortest + 1);
  ModelState m = InitialState(limits);
  while (seq.size() < len && m.life != Life::kGone) {
    const Step s = rng.Below(8) == 0 ? Refused(m, limits, rng) : Accepted(m, limits, rng);
    seq.push_back(s);
    m = Apply(m, s, limits).after;
  }
  return seq;
}

uint64_t SequenceSeed(uint64_t run_seed, uint64_t index) { return run_seed + index; }

}  // namespace qlaunch::testing::seq
