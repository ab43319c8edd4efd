#include "support/sequence_runner.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/hugepages.h"
#include "support/launch_env.h"
#include "support/sequence_checks.h"
#include "support/sequence_guest.h"
#include "support/sequence_host.h"

namespace qlaunch::testing::seq {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kPageMib = 2;

// A check that failed: its name (the signature's second half) and what it saw.
struct Failed {
  std::string check, detail;
};

template <typename F>
bool WaitFor(F&& ok, milliseconds limit, milliseconds every = milliseconds(200)) {
  for (auto end = Clock::now() + limit;; std::this_thread::sleep_for(every)) {
    if (ok()) return true;
    if (Clock::now() >= end) return false;
  }
}

std::string PidList(const std::vector<pid_t>& pids) {
  std::string s;
  for (pid_t p : pids) s += (s.empty() ? "" : " ") + std::to_string(p);
  return "[" + s + "]";
}

// One run of one sequence: the real domain and what the runner knows of it.
class Run {
 public:
  Run(const RunnerHost& host, size_t n)
      : host_(host), guest_(MakeSequenceGuest(host.boot, host.work / ("run-" + std::to_string(n)))) {}

  RunReport Go(const Sequence& seq);

 private:
  Env EnvOf(unsigned host) const {
    return {{"QLAUNCH_STATE_DIR", (host == 0 ? host_.root_a : host_.root_b).string()},
            {"QLAUNCH_CACHE_DIR", host_.cache.string()}};
  }
  RunResult Q(const std::vector<std::string>& args, unsigned host, milliseconds timeout = std::chrono::minutes(2)) {
    last_ = RunQlaunch(args, EnvOf(host), timeout);
    return last_;
  }
  HotplugGuest Console() const {
    HotplugGuest g = guest_.boot;
    g.serial = guest_.Console(console_);
    return g;
  }
  uint64_t LastCount() const {
    const std::vector<std::string> counts = Console().Reports("count");
    return counts.empty() ? 0 : std::stoull(counts.back());
  }

  std::optional<Failed> Boot();
  RunResult Exec(const Step& step, unsigned host);
  RunResult Migrate(unsigned from);
  std::optional<Failed> CheckStep(const Outcome& expected, const RunResult& r, const std::string& xml_before,
                                  pid_t pid_before, uint64_t pages_before);
  std::optional<Failed> CheckAll();
  std::optional<Failed> CheckWhere();
  std::optional<Failed> CheckHost();
  std::optional<Failed> CheckGuest();
  std::optional<Failed> CheckXml();
  json Monitor(const std::string& command);
  std::string LiveXml() { return Q({"dumpxml", kSequenceDomain}, model_.host).out; }
  std::optional<Failed> CleanUp();
  // The end of each host's last qemu.log, kept after each step and before each `list`, which
  // clears the entry of a QEMU that died, its log with it.
  void KeepQemuLogs();
  std::string Logs() const;

  const RunnerHost& host_;
  SequenceGuest guest_;
  ModelState model_ = InitialState();
  RunResult last_;
  unsigned console_ = 0;  // the console the guest writes to now
  unsigned saves_ = 0, migrations_ = 0;
  std::string sum_;
  uint64_t last_count_ = 0;
  pid_t pid_ = 0;
  std::string qemu_logs_[2];
};

std::optional<Failed> Run::Boot() {
  // QEMU (qlaunch-qemu) makes the destination's socket of a migration: in a directory it may write.
  const fs::path socks = guest_.dir / "sock";
  fs::create_directories(socks);
  if (const passwd* pw = ::getpwnam("qlaunch-qemu")) (void)!::chown(socks.c_str(), pw->pw_uid, pw->pw_gid);
  const fs::path xml = guest_.dir / "seq.xml";
  std::ofstream(xml) << guest_.DomainXml();
  RunResult r = Q({"start", "--json", xml.string()}, 0);
  KeepQemuLogs();
  if (r.exit_code != 0) return Failed{"start", r.Describe()};
  sum_ = Console().Report("sum", [](const std::string&) { return true; }, seconds(240));
  if (sum_.size() != 32) return Failed{"boot", "the guest never reported its buffer's MD5"};
  if (!WaitFor([&] { return LastCount() >= 2; }, seconds(60))) return Failed{"boot", "the guest does not count"};
  return CheckAll();
}

RunResult Run::Migrate(unsigned from) {
  const unsigned to = 1 - from, next_console = console_ + 1;
  RunResult live = Q({"dumpxml", kSequenceDomain}, from);
  if (live.exit_code != 0) return live;
  // The destination's QEMU writes a console of its own: its reports are the moved guest's.
  std::string xml = live.out;
  const std::string old_path = guest_.Console(console_).string(), new_path = guest_.Console(next_console).string();
  for (size_t at = xml.find(old_path); at != std::string::npos; at = xml.find(old_path, at + new_path.size()))
    xml.replace(at, old_path.size(), new_path);
  const fs::path dest = guest_.dir / ("dest-" + std::to_string(++migrations_) + ".xml");
  std::ofstream(dest) << xml;
  const std::string uri = "unix:" + (guest_.dir / "sock" / ("mig-" + std::to_string(migrations_) + ".sock")).string();
  RunResult incoming = Q({"start", "--incoming", uri, "--json", dest.string()}, to);
  if (incoming.exit_code != 0) return incoming;
  RunResult moved = Q({"migrate", kSequenceDomain, uri, "--live", "--json"}, from, std::chrono::minutes(5));
  if (moved.exit_code == 0) console_ = next_console;
  return moved;
}

RunResult Run::Exec(const Step& step, unsigned host) {
  const std::string name = kSequenceDomain;
  switch (step.op) {
    case Op::kSuspend: return Q({"suspend", name}, host);
    case Op::kResume: return Q({"resume", name}, host);
    case Op::kSetvcpus: return Q({"setvcpus", "--timeout", "60", name, std::to_string(step.arg)}, host);
    case Op::kSetmem: return Q({"setmem", name, std::to_string(step.arg) + "M"}, host);
    case Op::kAttachDisk:
    case Op::kAttachNic:
    case Op::kAttachDimm: return Q({"attach-device", name, guest_.DeviceFile(step.op)}, host);
    case Op::kDetachDisk:
    case Op::kDetachNic:
    case Op::kDetachDimm:
      // A guest that has not let go within a minute: exit 3 ("released": false), a failure here.
      return Q({"detach-device", "--timeout", "60", "--json", name, guest_.DeviceFile(step.op)}, host);
    case Op::kChangeMedia:
      if (step.arg == kEject) return Q({"change-media", name, kCdromTarget, "--eject"}, host);
      return Q({"change-media", name, step.arg == kBootDisk ? "vda" : kCdromTarget, guest_.Image(step.arg).string()},
               host);
    case Op::kMigrate: return Migrate(host);
    case Op::kMigrateLocal: return Q({"migrate", name, "--local", "--json"}, host, std::chrono::minutes(3));
    case Op::kSave:
      return Q({"save", "--json", name, (guest_.dir / ("save-" + std::to_string(saves_ + 1) + ".sav")).string()}, host,
               std::chrono::minutes(3));
    case Op::kRestore: {
      const fs::path file = guest_.dir / (saves_ ? "save-" + std::to_string(saves_) + ".sav" : "none.sav");
      return Q({"restore", "--json", file.string()}, host, std::chrono::minutes(3));
    }
    case Op::kDestroy: return Q({"destroy", name}, host);
  }
  return {};
}

json Run::Monitor(const std::string& command) {
  RunResult r = Q({"qemu-monitor-command", kSequenceDomain, "{\"execute\":\"" + command + "\"}"}, model_.host);
  const json j = json::parse(r.out, nullptr, false);
  return j.is_object() && j.contains("return") ? j["return"] : json{{"error", r.Describe()}};
}

// Listed where the model says, in its state, and nowhere else.
std::optional<Failed> Run::CheckWhere() {
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
  if (!l.is_array() || l.size() != 1 || l[0].value("name", "") != kSequenceDomain ||
      l[0].value("state", "") != LifeName(model_.life))
    return Failed{"listing", "the model has it " + std::string(LifeName(model_.life)) + " on " + host + "; " + host +
                                 " lists " + seen[model_.host]};
  if (seen[1 - model_.host] != "[]") return Failed{"listing", "the other host lists " + seen[1 - model_.host]};
  return std::nullopt;
}

// One QEMU (none when the domain is not live), nobody else holding its memfds, nothing else in the
// state roots, and the pool's free pages what the domain's memfds leave.
std::optional<Failed> Run::CheckHost() {
  const std::vector<pid_t> want = model_.Live() ? std::vector<pid_t>{pid_} : std::vector<pid_t>{};
  std::vector<pid_t> children, holders;
  const bool settled = WaitFor([&] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {  // QEMUs that quit: the test is their subreaper
    }
    children = LiveChildren();
    holders = PidsHoldingFd(std::string("memfd:qlaunch:") + kSequenceDomain + ":");
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
    if (entries != (here ? std::vector<std::string>{kSequenceDomain} : std::vector<std::string>{})) {
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
    use = HugepagesInUse(kSequenceDomain);
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
std::optional<Failed> Run::CheckGuest() {
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

std::optional<Failed> Run::CheckXml() {
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

std::optional<Failed> Run::CheckAll() {
  for (auto check : {&Run::CheckWhere, &Run::CheckHost, &Run::CheckGuest, &Run::CheckXml})
    if (std::optional<Failed> f = (this->*check)()) return f;
  return std::nullopt;
}

std::optional<Failed> Run::CheckStep(const Outcome& expected, const RunResult& r, const std::string& xml_before,
                                     pid_t pid_before, uint64_t pages_before) {
  if (expected.accepted && r.exit_code != 0) return Failed{"failed", "refused or failed though the model accepts it"};
  if (!expected.accepted && (r.exit_code != 1 || r.err.empty()))
    return Failed{"not refused", "exit " + std::to_string(r.exit_code) + " though the model refuses it (" + expected.why + ")"};
  if (!expected.accepted && model_.Live()) {
    const std::string xml_after = LiveXml();
    if (xml_after != xml_before) return Failed{"refusal changed it", "the live XML changed:\n" + xml_after};
    CheckWhere();
    if (pid_ != pid_before) return Failed{"refusal changed it", "QEMU pid " + std::to_string(pid_before) + " -> " + std::to_string(pid_)};
    const uint64_t pages = HugepagesInUse(kSequenceDomain).ours;
    if (pages != pages_before)
      return Failed{"refusal changed it", "its hugepages " + std::to_string(pages_before) + " -> " + std::to_string(pages)};
  }
  return std::nullopt;
}

void Run::KeepQemuLogs() {
  for (unsigned h : {0u, 1u}) {
    const fs::path log = (h == 0 ? host_.root_a : host_.root_b) / kSequenceDomain / "qemu.log";
    if (fs::exists(log)) qemu_logs_[h] = Tail(log, 15);
  }
}

std::string Run::Logs() const {
  std::string out;
  for (unsigned h : {0u, 1u})
    if (!qemu_logs_[h].empty()) out += std::string("\n--- qemu.log on ") + (h == 0 ? "A" : "B") + ":\n" + qemu_logs_[h];
  out += "\n--- console " + Console().serial.filename().string() + ":\n" + Tail(Console().serial, 6);
  return out;
}

// Destroys the domain wherever it is and checks the host is as it was: nothing listed, no QEMU,
// no memfd, empty state roots, every page back.
std::optional<Failed> Run::CleanUp() {
  for (unsigned h : {0u, 1u}) {
    RunResult l = Q({"list", "--json"}, h);
    if (l.out.find(kSequenceDomain) != std::string::npos) Q({"destroy", kSequenceDomain}, h);
  }
  model_.life = Life::kGone;
  std::optional<Failed> f = CheckHost();
  if (!f) f = CheckWhere();
  // Every image QEMU's user was given is root's again (made by the test as root).
  for (const char* image : {"vda.raw", "vdb.raw", "a.iso", "b.iso"}) {
    struct stat st {};
    const fs::path p = guest_.dir / image;
    if (!f && (::stat(p.c_str(), &st) != 0 || st.st_uid != 0 || st.st_gid != 0))
      f = Failed{"labels", p.string() + " is owned by " + std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) +
                               " once the domain is gone, not root's as before it started"};
  }
  // Whatever is left goes, so that the next sequence finds the host clean.
  for (pid_t pid : LiveChildren()) ::kill(pid, SIGKILL);
  WaitFor([] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    return LiveChildren().empty();
  }, seconds(5), milliseconds(20));
  for (unsigned h : {0u, 1u}) Q({"list"}, h);  // clears stale entries
  return f;
}

RunReport Run::Go(const Sequence& seq) {
  const auto t0 = Clock::now();
  RunReport rep;
  rep.steps = seq;
  auto fail = [&](size_t at, const std::string& verb, const Failed& f, const RunResult* r) {
    rep.passed = false;
    rep.failed_at = at;
    rep.signature = verb + ": " + f.check;
    std::ostringstream s;
    s << (at < seq.size() ? "step " + std::to_string(at + 1) + " (" + StepText(seq[at]) + ")" : verb) << ": " << f.check
      << ": " << f.detail << "\n  model before: " << StateText(model_);
    if (r) s << "\n--- qlaunch: " << r->Describe();
    s << Logs();
    rep.failure = s.str();
  };
  if (std::optional<Failed> f = Boot()) {
    fail(seq.size(), "boot", *f, &last_);
  } else {
    for (size_t i = 0; i < seq.size() && model_.life != Life::kGone; ++i) {
      const Step& step = seq[i];
      const Outcome expected = Apply(model_, step);
      const bool live = model_.Live();
      const std::string xml_before = live && !expected.accepted ? LiveXml() : "";
      const pid_t pid_before = pid_;
      const uint64_t pages_before = live && !expected.accepted ? HugepagesInUse(kSequenceDomain).ours : 0;
      const unsigned host = model_.host;
      const RunResult r = Exec(step, host);
      KeepQemuLogs();
      rep.verbs[std::string(OpName(step.op)) + (expected.accepted ? "" : " (refused)")]++;
      std::optional<Failed> f = CheckStep(expected, r, xml_before, pid_before, pages_before);
      if (f && expected.accepted && r.exit_code != 0) {
        // A verb that fails should leave the domain as it was: is it so, or is the guest lost?
        const std::optional<Failed> after = CheckAll();
        f->detail += after ? "; after it, as before it? no: " + after->check + ": " + after->detail
                           : "; after it the domain is as before it (every check passes)";
      }
      const ModelState before = model_;
      if (!f) {
        if (expected.accepted && step.op == Op::kSave) {
          ++saves_;
          last_count_ = LastCount();
          // The guest's random buffer cannot be compressed: a save file that keeps the guest's
          // memory is at least that large.
          const fs::path file = guest_.dir / ("save-" + std::to_string(saves_) + ".sav");
          std::error_code ec;
          const uint64_t bytes = fs::file_size(file, ec);
          if (ec || bytes < (uint64_t{kBufferMib} << 20))
            f = Failed{"save file", file.string() + " holds " + std::to_string(bytes) + " bytes, less than the guest's " +
                                        std::to_string(kBufferMib) + " MiB random buffer"};
        }
        model_ = expected.after;
        if (!f) f = CheckAll();
      }
      if (f) {
        const ModelState after = model_;
        model_ = before;
        fail(i, OpName(step.op), *f, &r);
        model_ = after;
        break;
      }
    }
  }
  if (std::optional<Failed> f = CleanUp(); f && rep.passed) fail(seq.size(), "clean-up", *f, nullptr);
  rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return rep;
}

}  // namespace

std::string RunReport::Summary() const {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed;
  if (passed) {
    s << "PASS (" << seconds << " s)";
  } else {
    s << "FAIL at " << (failed_at < steps.size() ? "step " + std::to_string(failed_at + 1) : "the end") << " ["
      << signature << "] (" << seconds << " s)";
  }
  return s.str();
}

RunReport SequenceRunner::Run(const Sequence& seq) {
  class Run run(host_, ++runs_);
  return run.Go(seq);
}

}  // namespace qlaunch::testing::seq
