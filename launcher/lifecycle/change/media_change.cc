#include "launcher/lifecycle/change/media_change.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "domain/parser.h"
#include "launcher/host/file_labels.h"
#include "launcher/host/qemu_user.h"
#include "launcher/lifecycle/change/change_recovery.h"
#include "launcher/lifecycle/change/media_record.h"
#include "launcher/lifecycle/change/running_def.h"
#include "launcher/lifecycle/session/domain_session.h"
#include "qemu_cmd/disk_plan.h"
#include "qemu_cmd/media_change_plan.h"

namespace qlaunch::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Fail(const std::string& message) { throw std::runtime_error(message); }

// The drive TARGET names: its <target dev>, else its current source path (as virsh finds it).
// Only a cdrom has media to change (qlaunch has no floppies).
size_t FindDrive(const domain::DomainDef& def, const std::string& target) {
  std::optional<size_t> found;
  for (size_t i = 0; i < def.devices.disks.size() && !found; ++i)
    if (def.devices.disks[i].target_dev == target) found = i;
  for (size_t i = 0; i < def.devices.disks.size() && !found; ++i)
    if (!def.devices.disks[i].source.empty() && def.devices.disks[i].source == target) found = i;
  if (!found) Fail("No disk found whose source path or target is " + target);
  const domain::Disk& d = def.devices.disks[*found];
  if (d.device != "cdrom")
    Fail("No disk found whose source path or target is " + target + " among the cdroms: disk '" + d.target_dev +
         "' is a " + d.device + ", and only a cdrom's media can be changed");
  return *found;
}

// The frontend's qdev id, from the start's device record of the <disk> at `line`.
std::string DeviceIdOf(const fs::path& dir, int line, const std::string& target) {
  json plan = json::parse(ReadSmallFile(dir / "plan.json").value_or(""), nullptr, false);
  if (plan.is_object() && plan.contains("devices"))
    for (const json& r : plan["devices"])
      if (r.value("element", "") == "disk" && r.value("line", 0) == line && !r.value("id", "").empty())
        return r["id"];
  Fail("disk '" + target + "': " + (dir / "plan.json").string() + " records no device id for it (the domain was " +
       "started by a qlaunch older than change-media)");
}

// What QEMU says of the drive: its tray and the node of its medium (query-block).
qemu::MediaNow AskDrive(qemu::QmpClient& qmp, const std::string& device_id, std::chrono::milliseconds timeout) {
  for (const json& b : qmp.Execute("query-block", nullptr, timeout)) {
    if (b.value("qdev", "") != device_id) continue;
    qemu::MediaNow now{device_id, std::nullopt, b.value("tray_open", false)};
    if (b.contains("inserted")) {
      std::string node = b["inserted"].value("node-name", "");
      if (node.ends_with("-format")) node.resize(node.size() - 7);
      now.old_node = node;
    }
    return now;
  }
  Fail("QEMU has no drive for the device " + device_id + " (query-block)");
}

// The new medium: an existing regular file or block device that qlaunch can read. Returns the
// disk type for it ("file" or "block").
std::string CheckMedium(const std::string& path, const std::string& target) {
  struct stat st {};
  const std::string what = "Cannot access storage file '" + path + "' for '" + target + "': ";
  if (::stat(path.c_str(), &st) != 0) Fail(what + std::strerror(errno));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) Fail(what + "it is neither a file nor a block device");
  if (::access(path.c_str(), R_OK) != 0) Fail(what + std::strerror(errno));
  return S_ISBLK(st.st_mode) ? "block" : "file";
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Does another disk of the domain than `index` use the file at `path`?
bool UsedElsewhere(const domain::DomainDef& def, size_t index, const std::string& path) {
  for (size_t i = 0; i < def.devices.disks.size(); ++i)
    if (i != index && !def.devices.disks[i].source.empty() && SameFile(def.devices.disks[i].source, path)) return true;
  return false;
}

class Sender {
 public:
  Sender(qemu::QmpClient& qmp, std::chrono::milliseconds timeout, json* log) : qmp_(qmp), timeout_(timeout), log_(log) {}
  // Sends one command; QEMU's error as std::runtime_error naming it.
  json Send(const qemu::QmpCommand& c) {
    log_->push_back({{"execute", c.execute}, {"arguments", json::parse(c.arguments.dump())}});
    try {
      return qmp_.Execute(c.execute, json::parse(c.arguments.dump()), timeout_);
    } catch (const qemu::QmpError& e) {
      throw std::runtime_error(c.execute + " " + c.arguments.dump() + ": " + e.what());
    }
  }
  // Best effort (rollback, and libvirt ignores failures to delete the old medium's nodes too).
  void TrySend(const qemu::QmpCommand& c) {
    try {
      Send(c);
    } catch (const std::exception&) {
    }
  }

 private:
  qemu::QmpClient& qmp_;
  std::chrono::milliseconds timeout_;
  json* log_;
};

}  // namespace

ChangeMediaResult ChangeMedia(const StateDir& state, const ChangeMediaOptions& opts) {
  ChangeMediaOptions o = opts;
  if (o.action == MediaAction::kEject && !o.source.empty())
    Fail("--eject takes no FILE (got '" + o.source + "'); to change the medium, give FILE without --eject");
  if (o.action == MediaAction::kInsert && o.source.empty()) Fail("No source is specified for inserting media (give FILE)");
  if (o.action == MediaAction::kUpdate && o.source.empty()) o.action = MediaAction::kEject;  // as virsh: no new source
  DomainSession s = OpenDomainSession(state, o.name, Verb::kChangeMedia, o.qmp_timeout);
  RecoverChanges(state, o.name, *s.qmp, o.qmp_timeout);
  const fs::path dir = state.DomainDir(o.name);
  const fs::path xml_path = RunningXmlPath(dir);
  const std::optional<std::string> xml = ReadSmallFile(xml_path);
  if (!xml) Fail("domain " + o.name + ": cannot read " + xml_path.string());
  const domain::DomainDef def = domain::ParseDomainXml(*xml, xml_path.string());
  const size_t index = FindDrive(def, o.target);
  domain::Disk disk = def.devices.disks[index];

  ChangeMediaResult r;
  r.target = disk.target_dev;
  r.device_id = DeviceIdOf(dir, disk.line, disk.target_dev);
  r.old_source = disk.source;
  r.new_source = o.source;
  const qemu::MediaNow now = AskDrive(*s.qmp, r.device_id, o.qmp_timeout);
  if (o.action == MediaAction::kEject && !now.old_node)
    Fail("The disk device '" + r.target + "' doesn't have media");
  if (o.action == MediaAction::kInsert && now.old_node) Fail("The disk device '" + r.target + "' already has media");
  r.old_node = now.old_node.value_or("");

  // libvirt numbers every storage source it prepares, an ejected (empty) one too.
  // The counter is shared with attach-device's disks (running_def.h's node_index counts media.json's too).
  const unsigned index_now = LoadRunningState(dir).node_index + 1;
  const std::string node = "libvirt-" + std::to_string(index_now);
  if (!o.source.empty()) {
    disk.type = CheckMedium(o.source, r.target);
    r.new_node = node;
  }
  disk.source = o.source;
  const qemu::MediaChangePlan plan = qemu::PlanMediaChange(disk, now, r.new_node, o.force);

  // The new medium becomes QEMU's user's (recorded, so destroy gives it back), unless the domain
  // holds it already.
  const bool relabelled = !o.source.empty() && !LabelRecorded(dir, o.source);
  auto give_back_new = [&] {
    if (relabelled) state.WithLock([&] { RestoreLabelsOf(dir, {o.source}); });
  };
  if (relabelled) {
    LabelTarget t;
    t.path = o.source;
    try {
      state.WithLock([&] { RelabelForQemu({t}, RecordedQemuUser(dir, def), dir); });
    } catch (...) {
      give_back_new();
      throw;
    }
  }

  // The journal (launcher/lifecycle/change/running_def.h): a qlaunch killed from here on is finished or
  // undone by the next command that changes the domain.
  WriteChange(dir, {{"op", "media"}, {"id", r.device_id}, {"target", r.target}, {"type", disk.type},
                    {"source", o.source}, {"node", r.new_node}, {"next_node_index", index_now + 1},
                    {"old_source", r.old_source}, {"relabelled", relabelled}});
  Sender send(*s.qmp, o.qmp_timeout, &r.commands);
  bool added = false;
  try {
    for (const qemu::QmpCommand& c : plan.add_nodes) {
      added = true;
      send.Send(c);
    }
    if (plan.open_tray) send.Send(*plan.open_tray);
    if (plan.wait_for_tray) {
      const auto deadline = Clock::now() + o.tray_timeout;
      while (!AskDrive(*s.qmp, r.device_id, o.qmp_timeout).tray_open) {
        if (Clock::now() >= deadline)
          Fail("timed out waiting to open tray of '" + r.target + "' (the guest keeps it locked; --force opens it anyway)");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    for (const qemu::QmpCommand& c : plan.commands) {
      if (c.execute == "blockdev-del")
        send.TrySend(c);
      else
        send.Send(c);
    }
  } catch (const std::exception& e) {
    if (added)
      for (const qemu::QmpCommand& c : plan.rollback) send.TrySend(c);
    give_back_new();
    ClearChange(dir);
    throw std::runtime_error("domain " + o.name + ": cannot change the media of '" + r.target + "': " + e.what());
  }

  if (const char* f = std::getenv("QLAUNCH_HOTPLUG_FAULT"); f && std::string(f) == "crash") std::_Exit(9);
  RecordMediaChange(dir, r.target, disk.type, o.source, r.new_node, index_now + 1);
  ClearChange(dir);
  // The old medium goes back to its owner, unless something of this domain still uses it.
  if (!r.old_source.empty() && !UsedElsewhere(def, index, r.old_source) &&
      (o.source.empty() || !SameFile(r.old_source, o.source)))
    state.WithLock([&] { RestoreLabelsOf(dir, {r.old_source}); });
  return r;
}

}  // namespace qlaunch::launcher
