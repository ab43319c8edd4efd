#include "support/verb_model.h"

#include <array>
#include <sstream>

namespace qlaunch::testing::seq {

namespace {

constexpr std::array<const char*, kOpCount> kOpNames = {
    "suspend",    "resume",      "setvcpus",     "setmem",       "attach-disk", "detach-disk",
    "attach-nic", "detach-nic",  "attach-dimm",  "detach-dimm",  "change-media", "migrate",
    "migrate-local", "save",     "restore",      "destroy"};
constexpr std::array<const char*, 4> kMediaNames = {"eject", "a", "b", "vda"};

bool TakesNumber(Op op) { return op == Op::kSetvcpus || op == Op::kSetmem; }

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

Outcome Refused(const ModelState& m, std::string why) { return {false, true, m, std::move(why)}; }
Outcome Accepted(ModelState m) { return {true, true, std::move(m), ""}; }
Outcome Unmodelled(const ModelState& m) {
  return {false, false, m, "an unplug waits for the guest, which is paused"};
}

}  // namespace

const char* OpName(Op op) { return kOpNames[static_cast<size_t>(op)]; }
const char* LifeName(Life l) {
  switch (l) {
    case Life::kRunning: return "running";
    case Life::kPaused: return "paused";
    case Life::kSaved: return "saved";
    case Life::kGone: return "gone";
  }
  return "?";
}

std::string StepText(const Step& s) {
  std::string t = OpName(s.op);
  if (TakesNumber(s.op)) t += " " + std::to_string(s.arg);
  if (s.op == Op::kChangeMedia) t += std::string(" ") + (s.arg < kMediaNames.size() ? kMediaNames[s.arg] : "?");
  return t;
}

std::optional<Step> ParseStep(const std::string& text) {
  std::istringstream in(Trim(text));
  std::string name, arg, extra;
  in >> name >> arg >> extra;
  if (!extra.empty()) return std::nullopt;
  for (size_t i = 0; i < kOpCount; ++i) {
    if (name != kOpNames[i]) continue;
    Step s{static_cast<Op>(i), 0};
    if (TakesNumber(s.op)) {
      if (arg.empty() || arg.find_first_not_of("0123456789") != std::string::npos || arg.size() > 6) return std::nullopt;
      s.arg = static_cast<unsigned>(std::stoul(arg));
    } else if (s.op == Op::kChangeMedia) {
      size_t m = 0;
      while (m < kMediaNames.size() && arg != kMediaNames[m]) ++m;
      if (m == kMediaNames.size()) return std::nullopt;
      s.arg = static_cast<unsigned>(m);
    } else if (!arg.empty()) {
      return std::nullopt;
    }
    return s;
  }
  return std::nullopt;
}

std::string SequenceText(const Sequence& seq) {
  std::string out;
  for (const Step& s : seq) out += (out.empty() ? "" : "; ") + StepText(s);
  return out;
}

std::optional<Sequence> ParseSequence(const std::string& text, std::string* error) {
  Sequence seq;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ';');) {
    if (Trim(part).empty()) continue;
    std::optional<Step> s = ParseStep(part);
    if (!s) {
      if (error) *error = "not a step: '" + Trim(part) + "'";
      return std::nullopt;
    }
    seq.push_back(*s);
  }
  return seq;
}

std::string StateText(const ModelState& m) {
  std::ostringstream t;
  t << LifeName(m.life);
  if (m.life == Life::kSaved && m.saved_paused) t << " (paused)";
  t << " on " << (m.host == 0 ? "A" : "B") << ", " << m.vcpus << " vCPU" << (m.vcpus == 1 ? "" : "s") << ", balloon "
    << m.balloon_mib << " MiB";
  if (m.disk) t << ", disk vdb";
  if (m.nic) t << ", NIC";
  if (m.dimm) t << ", DIMM";
  t << ", cdrom " << (m.media == kEject ? "empty" : kMediaNames[m.media]);
  return t.str();
}

unsigned MemoryMib(const ModelState& m, const Limits& limits) {
  return limits.memory_mib + (m.dimm ? limits.dimm_mib : 0);
}

ModelState InitialState(const Limits& limits) {
  ModelState m;
  m.balloon_mib = limits.memory_mib;
  return m;
}

Outcome Apply(const ModelState& before, const Step& step, const Limits& limits) {
  ModelState m = before;
  if (before.life == Life::kGone) return Refused(m, "the domain was destroyed");
  if (step.op == Op::kRestore) {
    if (before.life != Life::kSaved)
      return Refused(m, before.saved_once ? "its domain is running" : "no save file to restore");
    m.life = before.saved_paused ? Life::kPaused : Life::kRunning;
    return Accepted(m);
  }
  // The state table: a saved domain is shut off, which accepts none of the run-time verbs.
  if (before.life == Life::kSaved) return Refused(m, "the domain is not running");
  const bool paused = before.life == Life::kPaused;
  switch (step.op) {
    case Op::kSuspend: m.life = Life::kPaused; break;
    case Op::kResume: m.life = Life::kRunning; break;
    case Op::kSetvcpus:
      if (step.arg < 1 || step.arg > limits.max_vcpus) return Refused(m, "vCPU count out of range");
      // The guest runs under TCG, where QEMU cannot unplug a vCPU and keep the guest.
      if (step.arg < m.vcpus) return Refused(m, "no vCPU unplug under TCG");
      m.vcpus = step.arg;
      break;
    case Op::kSetmem:
      if (step.arg < 1 || step.arg > MemoryMib(m, limits)) return Refused(m, "more than <memory>");
      m.balloon_mib = step.arg;
      break;
    case Op::kAttachDisk:
      if (m.disk) return Refused(m, "vdb is attached already");
      m.disk = true;
      break;
    case Op::kDetachDisk:
      if (!m.disk) return Refused(m, "no vdb to detach");
      if (paused) return Unmodelled(m);
      m.disk = false;
      break;
    case Op::kAttachNic:
      if (m.nic) return Refused(m, "the NIC is attached already");
      m.nic = true;
      break;
    case Op::kDetachNic:
      if (!m.nic) return Refused(m, "no NIC to detach");
      if (paused) return Unmodelled(m);
      m.nic = false;
      break;
    // The balloon's target counts a DIMM (QEMU's balloon holds back the same memory with it or
    // without it): <currentMemory> grows and shrinks with it, as libvirt's does.
    case Op::kAttachDimm:
      if (m.dimm) return Refused(m, "no free DIMM slot");
      m.dimm = true;
      m.balloon_mib += limits.dimm_mib;
      break;
    case Op::kDetachDimm:
      if (!m.dimm) return Refused(m, "no DIMM to detach");
      if (paused) return Unmodelled(m);
      m.dimm = false;
      m.balloon_mib -= limits.dimm_mib;
      break;
    case Op::kChangeMedia:
      if (step.arg == kBootDisk) return Refused(m, "vda is not a removable disk");
      if (step.arg > kBootDisk) return Refused(m, "no such medium");
      m.media = step.arg;
      break;
    case Op::kMigrate: m.host = 1 - m.host; break;
    case Op::kMigrateLocal: break;
    case Op::kSave:
      m.saved_paused = m.life == Life::kPaused;
      m.life = Life::kSaved;
      m.saved_once = true;
      break;
    case Op::kDestroy: m.life = Life::kGone; break;
    case Op::kRestore: break;  // above
  }
  return Accepted(m);
}

bool Modelled(const Sequence& seq, const Limits& limits) {
  ModelState m = InitialState(limits);
  for (const Step& s : seq) {
    const Outcome o = Apply(m, s, limits);
    if (!o.modelled) return false;
    m = o.after;
  }
  return true;
}

Sequence Normalized(const Sequence& seq, const Limits& limits) {
  Sequence out;
  ModelState m = InitialState(limits);
  for (const Step& s : seq) {
    if (m.life == Life::kGone) break;
    out.push_back(s);
    m = Apply(m, s, limits).after;
  }
  return out;
}

}  // namespace qlaunch::testing::seq
