// The model of the sequence tests (issue 34; tests/verb_sequence_test.cc, scripts/soak): what a
// booted domain is after each run-time verb, as far as a test can tell from outside, and whether
// the verb is accepted or refused there. Pure (no I/O): the generator (verb_generator.h) walks it
// and the runner (sequence_runner.h) checks the real domain against it after every step.
//
// The model's domain (sequence_guest.h builds it) has 1 of 2 vCPUs plugged, 256 MiB behind a
// virtio balloon, one DIMM slot, an empty cdrom, and no extra disk or NIC; it runs on host A (one
// state root) and may move to host B (another) and back. A step is one verb with its argument:
//
//   suspend, resume, destroy, save, restore (the file of the last save), migrate (to the other
//   host, the destination started from the source's dumpxml), migrate-local, setvcpus N,
//   setmem MIB, attach-disk, detach-disk, attach-nic, detach-nic, attach-dimm, detach-dimm,
//   change-media a|b|eject|vda (vda: the boot disk, not a cdrom: refused)
//
// An unplug (detach-disk, detach-nic, detach-dimm, setvcpus to fewer) of a paused domain is not
// modelled: it waits for a guest that cannot answer, and stays pending until it runs again. The
// generator makes none, and the shrinker runs no candidate with one.
//
// A saved domain accepts only restore (it is shut off, as the state table says of every run-time
// verb); a running or paused one refuses what libvirt refuses of it: a vCPU count above the
// maximum, a balloon above <memory>, a second disk with the same target, a second NIC with the same
// MAC or a second DIMM without a slot, a detach of what is not attached, media of a disk, a restore
// of a file whose domain runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace qlaunch::testing::seq {

enum class Op {
  kSuspend, kResume, kSetvcpus, kSetmem, kAttachDisk, kDetachDisk, kAttachNic, kDetachNic, kAttachDimm,
  kDetachDimm, kChangeMedia, kMigrate, kMigrateLocal, kSave, kRestore, kDestroy
};
inline constexpr size_t kOpCount = 16;

const char* OpName(Op op);  // "suspend", ..., "attach-disk", "migrate-local", ...

// change-media's argument.
enum Media : unsigned { kEject = 0, kImageA = 1, kImageB = 2, kBootDisk = 3 };

struct Step {
  Op op = Op::kSuspend;
  unsigned arg = 0;  // setvcpus: the count; setmem: MiB; change-media: Media; else 0
  bool operator==(const Step&) const = default;
};
using Sequence = std::vector<Step>;

// "setvcpus 2", "setmem 192", "change-media eject", "attach-dimm", ...; ParseStep reads it back.
std::string StepText(const Step& s);
std::optional<Step> ParseStep(const std::string& text);
// "suspend; setvcpus 2; save; restore" ("" for none); ParseSequence reads it back (nullopt, with
// *error naming the step, for a step it does not know).
std::string SequenceText(const Sequence& seq);
std::optional<Sequence> ParseSequence(const std::string& text, std::string* error = nullptr);

// The domain's fixed shape, as its XML declares it.
struct Limits {
  unsigned max_vcpus = 2;
  unsigned memory_mib = 256;  // <memory> without DIMMs, and the balloon's ceiling
  unsigned dimm_mib = 128;    // the one DIMM the domain has a slot for
};

enum class Life { kRunning, kPaused, kSaved, kGone };
const char* LifeName(Life l);  // "running", "paused", "saved", "gone"

struct ModelState {
  Life life = Life::kRunning;
  bool saved_paused = false;  // saved while paused: restored paused
  unsigned host = 0;          // 0: A, 1: B
  unsigned vcpus = 1;
  unsigned balloon_mib = 256;  // <currentMemory>: what the balloon leaves the guest, DIMM included
  bool disk = false, nic = false, dimm = false;
  unsigned media = kEject;  // kEject (empty), kImageA or kImageB
  bool saved_once = false;  // a save file exists (restore names it; else a file that does not)
  bool operator==(const ModelState&) const = default;
  bool Live() const { return life == Life::kRunning || life == Life::kPaused; }
};
std::string StateText(const ModelState& m);
// <memory>: the memory at start and the DIMM's.
unsigned MemoryMib(const ModelState& m, const Limits& limits = {});
// The state a sequence starts from: the domain just booted on A.
ModelState InitialState(const Limits& limits = {});  // for reports: "running on A, 2 vCPUs, ..."

struct Outcome {
  bool accepted = false;
  bool modelled = true;  // false: an unplug of a paused domain (accepted is false then too)
  ModelState after;      // == before when refused
  std::string why;       // why it is refused or not modelled ("" when accepted)
};
Outcome Apply(const ModelState& before, const Step& step, const Limits& limits = {});

// Every step of the sequence modelled (from the initial state).
bool Modelled(const Sequence& seq, const Limits& limits = {});

// The sequence as it can run: nothing after the first accepted destroy (the domain is gone).
Sequence Normalized(const Sequence& seq, const Limits& limits = {});

}  // namespace qlaunch::testing::seq
