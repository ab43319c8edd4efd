// The invariants SequenceRun checks after every step (sequence_runner.h says which).
#include <sys/wait.h>

#include <algorithm>

#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/sequence_checks.h"
#include "support/sequence_host.h"
#include "support/sequence_run.h"

namespace qlaunch::testing::seq {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr uint64_t kPageMib = 2;

std::string PidList(const std::vector<pid_t>& pids) {
  std::string s;
  for (pid_t p : pids) s += (s.empty() ? "" : " ") + std::to_string(p);
  return "[" + s + "]";
}

// One run of one sequence: the real domain and what the runner knows of it.
}  // namespace

json SequenceRun::Monitor(const std::string& command) {
  RunResult r = Q({"qemu-monitor-command", SequenceDomain(), "{\"execute\":\"" + command + "\"}"}, model_.host);
  const json j = json::parse(r.out, nullptr, false);
  return j.is_object() && j.contains("return") ? j["return"] : json{{"error", r.Describe()}};
}

// Listed where the model says, in its state, and nowhere else.
std::optional<Failed> SequenceRun::CheckWhere() {
  KeepQemuLogs();  // before `list` clears the entry of a QEMU that died since the step
  std::string seen[2];
  for (unsigned h : {0u, 1u}) {
    // A destination settles a moment after the source has reported the migration done.
    WaitFor([&] {
      RunResult r = Q({"list", "--json"}, h);
      const json l = json::parse(r.out, nullptr, false);
      seen[h] = r.exit_code == 0 && l.is_array() ? l.dump() : "(" + r.Describe() + ")";
      if (h == model_.host && model_.Live() && l.is_array() && l.size() == 1) pid_ = l[0].value("pid", 0);
      return seen[h].find("\"incoming\"") == std::string::npos && seen[h].find("\"migrating\"") == std::string::npos;
    }, seconds(30));
  }
  const std::string host = model_.host == 0 ? "A" : "B";
  if (!model_.Live()) {
    if (seen[0] != "[]" || seen[1] != "[]")
      return Failed{"listing", "the domain is " + std::string(LifeName(model_.life)) + ", yet A lists " + seen[0] +
                                   " and B " + seen[1]};
    return std::nullopt;
  }
  const json l = json::parse(seen[model_.host], nullptr, false);
  if (!l.is_array() || l.size() != 1 || l[0].value("name", "") != SequenceDomain() ||
      l[0].value("state", "") != LifeName(model_.life))
    return Failed{"listing", "the model has it " + std::string(LifeName(model_.life)) + " on " + host + "; " + host +
                                 " lists " + seen[model_.host]};
  if (seen[1 - model_.host] != "[]") return Failed{"listing", "the other host lists " + seen[1 - model_.host]};
  return std::nullopt;
}

// One QEMU (none when the domain is not live), nobody else holding its memfds, nothing else in the
// state roots, and the pool's free pages what the domain's memfds leave.
std::optional<Failed> SequenceRun::CheckHost() {
  const std::vector<pid_t> want = model_.Live() ? std::vector<pid_t>{pid_} : std::vector<pid_t>{};
  std::vector<pid_t> children, holders;
  const bool settled = WaitFor([&] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {  // QEMUs that quit: the test is their subreaper
    }
    children = LiveChildren();
    holders = PidsHoldingFd(std::string("memfd:qlaunch:") + SequenceDomain() + ":");
    std::sort(children.begin(), children.end());
    std::sort(holders.begin(), holders.end());
    return children == want && holders == want;
  }, seconds(10));
  if (!settled)
    return Failed{"leak", "QEMU " + PidList(want) + " expected; processes left to the test " + PidList(children) +
                              ", holding the domain's memfds " + PidList(holders)};
  for (unsigned h : {0u, 1u}) {
    const std::vector<std::string> entries = RootEntries(h == 0 ? host_.root_a : host_.root_b);
    const bool here = model_.Live() && h == model_.host;
    if (entries != (here ? std::vector<std::string>{SequenceDomain()} : std::vector<std::string>{})) {
      std::string list;
      for (const std::string& e : entries) list += " " + e;
      return Failed{"leak", std::string("state root of ") + (h == 0 ? "A" : "B") + " holds:" + list};
    }
  }
  // QEMU 7.2's balloon gives no hugetlb page back (seen: 64 MiB ballooned, every page held).
  const uint64_t expected = model_.Live() ? MemoryMib(model_) / kPageMib : 0;
  HugepageUse use;
  uint64_t free = 0, total = 0;
  const bool balanced = WaitFor([&] {
    use = HugepagesInUse(SequenceDomain());
    free = HugepagesFree();
    total = HugepagesTotal();
    return free + use.ours + use.others == total && use.ours == expected;
  }, seconds(10));
  if (!balanced)
    return Failed{"hugepages", "pool " + std::to_string(total) + " pages, free " + std::to_string(free) +
                                   ", held by the domain's memfds " + std::to_string(use.ours) + " (its memory: " +
                                   std::to_string(expected) + "), by other hugetlb files " + std::to_string(use.others)};
  return std::nullopt;
}

// Running: the guest counts on past its next sum of the buffer, and every sum on its console is
// the first one. Paused: it does not count.
std::optional<Failed> SequenceRun::CheckGuest() {
  if (!model_.Live()) return std::nullopt;
  const json status = Monitor("query-status");
  if (status.value("status", "") != LifeName(model_.life))
    return Failed{"qemu status", "QEMU says " + status.dump() + ", the model " + LifeName(model_.life)};
  if (model_.life == Life::kPaused) {
    const uint64_t before = LastCount();
    std::this_thread::sleep_for(milliseconds(1200));
    if (LastCount() != before)
      return Failed{"counts while paused", "count " + std::to_string(before) + " -> " + std::to_string(LastCount())};
    return std::nullopt;
  }
  // A new console (a migration's destination, a restore) has a first count after a moment. Then
  // past the next multiple of kResumEvery: a resum of the buffer printed since this check began,
  // on this console.
  if (!WaitFor([&] { return LastCount() > 0; }, seconds(90), milliseconds(300)))
    return Failed{"not counting", "no count on " + Console().serial.string() + " (last seen " +
                                      std::to_string(last_count_) + ")"};
  const uint64_t target = (LastCount() / kResumEvery + 1) * kResumEvery + 1;
  if (!WaitFor([&] { return LastCount() >= target; }, seconds(90), milliseconds(300)))
    return Failed{"not counting", "the guest's count stays at " + std::to_string(LastCount()) + " (waited for " +
                                      std::to_string(target) + ")"};
  if (LastCount() < last_count_)
    return Failed{"not counting", "the count went back from " + std::to_string(last_count_) + " to " +
                                      std::to_string(LastCount()) + ": the guest started again"};
  last_count_ = LastCount();
  for (const char* kind : {"sum", "resum"})
    for (const std::string& s : Console().Reports(kind))
      if (s != sum_)
        return Failed{"memory", std::string(kind) + " " + s + " on " + Console().serial.string() +
                                    ", the buffer's first sum was " + sum_};
  if (Console().Reports("resum").empty()) return Failed{"memory", "no resum on " + Console().serial.string()};
  return std::nullopt;
}

std::optional<Failed> SequenceRun::CheckXml() {
  if (!model_.Live()) return std::nullopt;
  const std::string xml = LiveXml();
  json qemu = json::object();
  for (const char* c : {"query-hotpluggable-cpus", "query-memory-devices", "query-block", "query-pci"}) qemu[c] = Monitor(c);
  std::vector<std::string> problems = CompareLiveXml(xml, qemu, model_, guest_);
  if (problems.empty()) {
    // A running guest's driver takes the balloon where it was sent, in a moment; a paused one
    // cannot, but its XML still says where the balloon is.
    const ModelState* target = model_.life == Life::kRunning ? &model_ : nullptr;
    std::string balloon;
    if (!WaitFor([&] {
          const json actual = Monitor("query-balloon");
          balloon = CompareBalloon(LiveXml(), actual, target);
          return balloon.empty();
        }, seconds(30), milliseconds(500)))
      problems.push_back(balloon);
  }
  if (problems.empty()) return std::nullopt;
  std::string all;
  for (const std::string& p : problems) all += "\n  " + p;
  return Failed{"live xml", all.substr(3)};
}

std::optional<Failed> SequenceRun::CheckAll() {
  for (auto check : {&SequenceRun::CheckWhere, &SequenceRun::CheckHost, &SequenceRun::CheckGuest, &SequenceRun::CheckXml})
    if (std::optional<Failed> f = (this->*check)()) return f;
  return std::nullopt;
}

}  // namespace qlaunch::testing::seq
