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
#include "support/sequence_run.h"

namespace qlaunch::testing::seq {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

std::optional<Failed> SequenceRun::Boot() {
  // QEMU (the domain's leased uid) makes the destination's socket of a migration: in a directory
  // it may write, sticky as /tmp.
  const fs::path socks = guest_.dir / "sock";
  fs::create_directories(socks);
  (void)!::chmod(socks.c_str(), 01777);
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

RunResult SequenceRun::Migrate(unsigned from) {
  const unsigned to = 1 - from, next_console = console_ + 1;
  RunResult live = Q({"dumpxml", SequenceDomain()}, from);
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
  RunResult moved = Q({"migrate", SequenceDomain(), uri, "--live", "--json"}, from, std::chrono::minutes(5));
  if (moved.exit_code == 0) console_ = next_console;
  return moved;
}

RunResult SequenceRun::Exec(const Step& step, unsigned host) {
  const std::string name = SequenceDomain();
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

std::optional<Failed> SequenceRun::CheckStep(const Outcome& expected, const RunResult& r, const std::string& xml_before,
                                     pid_t pid_before, uint64_t pages_before) {
  if (expected.accepted && r.exit_code != 0) return Failed{"failed", "refused or failed though the model accepts it"};
  if (!expected.accepted && (r.exit_code != 1 || r.err.empty()))
    return Failed{"not refused",
                  "exit " + std::to_string(r.exit_code) + " though the model refuses it (" + expected.why + ")"};
  if (!expected.accepted && model_.Live()) {
    const std::string xml_after = LiveXml();
    if (xml_after != xml_before) return Failed{"refusal changed it", "the live XML changed:\n" + xml_after};
    CheckWhere();
    if (pid_ != pid_before)
      return Failed{"refusal changed it", "QEMU pid " + std::to_string(pid_before) + " -> " + std::to_string(pid_)};
    const uint64_t pages = HugepagesInUse(SequenceDomain()).ours;
    if (pages != pages_before)
      return Failed{"refusal changed it", "its hugepages " + std::to_string(pages_before) + " -> " + std::to_string(pages)};
  }
  return std::nullopt;
}

void SequenceRun::KeepQemuLogs() {
  for (unsigned h : {0u, 1u}) {
    const fs::path log = (h == 0 ? host_.root_a : host_.root_b) / SequenceDomain() / "qemu.log";
    if (fs::exists(log)) qemu_logs_[h] = Tail(log, 15);
  }
}

std::string SequenceRun::Logs() const {
  std::string out;
  for (unsigned h : {0u, 1u})
    if (!qemu_logs_[h].empty()) out += std::string("\n--- qemu.log on ") + (h == 0 ? "A" : "B") + ":\n" + qemu_logs_[h];
  out += "\n--- console " + Console().serial.filename().string() + ":\n" + Tail(Console().serial, 6);
  return out;
}

// Destroys the domain wherever it is and checks the host is as it was: nothing listed, no QEMU,
// no memfd, empty state roots, every page back.
std::optional<Failed> SequenceRun::CleanUp() {
  for (unsigned h : {0u, 1u}) {
    RunResult l = Q({"list", "--json"}, h);
    if (l.out.find(SequenceDomain()) != std::string::npos) Q({"destroy", SequenceDomain()}, h);
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

RunReport SequenceRun::Go(const Sequence& seq) {
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
      const uint64_t pages_before = live && !expected.accepted ? HugepagesInUse(SequenceDomain()).ours : 0;
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
  SequenceRun run(host_, ++runs_);
  return run.Go(seq);
}

}  // namespace qlaunch::testing::seq
