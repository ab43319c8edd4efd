#include "qemu_cmd/media_change_plan.h"

#include <stdexcept>

#include "qemu_cmd/disk_plan.h"

namespace qlaunch::qemu {

namespace {

using Json = nlohmann::ordered_json;

QmpCommand Cmd(std::string execute, Json arguments) { return {std::move(execute), std::move(arguments)}; }

// libvirt's qemuBlockStorageSourceChainDetach: the format node first, then the storage node under it.
void DeleteNodes(const std::string& node, std::vector<QmpCommand>* out) {
  out->push_back(Cmd("blockdev-del", {{"node-name", node + "-format"}}));
  out->push_back(Cmd("blockdev-del", {{"node-name", node + "-storage"}}));
}

}  // namespace

MediaChangePlan PlanMediaChange(const domain::Disk& disk, const MediaNow& now, const std::string& new_node,
                                bool force) {
  if (disk.device != "cdrom")
    throw std::invalid_argument("disk '" + disk.target_dev + "' is a " + disk.device +
                                ", not a cdrom: only a cdrom's medium can be changed");
  const bool insert = !disk.source.empty();
  if (!insert && !now.old_node) throw std::invalid_argument("The disk device '" + disk.target_dev + "' doesn't have media");
  if (insert && new_node.empty()) throw std::invalid_argument("no node name for the new medium of '" + disk.target_dev + "'");
  MediaChangePlan plan;
  const Json id = {{"id", now.device_id}};
  if (insert) {
    const DiskBlockdevNodes nodes = DiskBlockdevs(disk, new_node);
    plan.add_nodes.push_back(Cmd("blockdev-add", nodes.storage));
    plan.add_nodes.push_back(Cmd("blockdev-add", nodes.format));
    DeleteNodes(new_node, &plan.rollback);
  }
  if (!now.tray_open) {
    plan.open_tray = Cmd("blockdev-open-tray", {{"id", now.device_id}, {"force", force}});
    plan.wait_for_tray = !force;
  }
  plan.commands.push_back(Cmd("blockdev-remove-medium", id));
  if (now.old_node) DeleteNodes(*now.old_node, &plan.commands);
  if (insert)
    plan.commands.push_back(Cmd("blockdev-insert-medium", {{"id", now.device_id}, {"node-name", new_node + "-format"}}));
  plan.commands.push_back(Cmd("blockdev-close-tray", id));
  return plan;
}

nlohmann::ordered_json ToJson(const std::vector<QmpCommand>& commands) {
  Json out = Json::array();
  for (const QmpCommand& c : commands) out.push_back({{"execute", c.execute}, {"arguments", c.arguments}});
  return out;
}

}  // namespace qlaunch::qemu
