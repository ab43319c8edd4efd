// The live XML of the sequence tests' domain (`qlaunch dumpxml`) checked against the model
// (verb_model.h) and against what its QEMU reports. Pure: the runner (sequence_runner.h) asks
// qlaunch and QEMU, these compare, and the unit tests feed them recorded answers.
//
// Against the model: the plugged vCPUs (<vcpu current>), <memory> (with the DIMM), the disk vdb,
// the NIC (by its MAC), the DIMM, the cdrom's medium.
// Against QEMU:
//   - <vcpu current> = the plugged entries of query-hotpluggable-cpus (those with a qom-path);
//   - each <memory model='dimm'> = a dimm of query-memory-devices, by alias (QEMU's id) and size;
//   - each <disk> = a drive of query-block (by its alias, QEMU's qdev id), with the same file in
//     it, or none for an empty cdrom; and no drive QEMU has that the XML does not;
//   - each device with an alias and a PCI address = the function of query-pci with that id at
//     that slot, and no PCI device with an id that the XML does not place there.
// And the balloon: <currentMemory> = query-balloon's actual (as libvirt, qlaunch shows what the
// balloon leaves the guest now), which is the model's target once a running guest got there.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/sequence_guest.h"
#include "support/verb_model.h"

namespace qlaunch::testing::seq {

// `qemu`: {"query-hotpluggable-cpus": ..., "query-memory-devices": ..., "query-block": ...,
// "query-pci": ...}, each the command's "return" value. Every disagreement, one line each.
std::vector<std::string> CompareLiveXml(const std::string& live_xml, const nlohmann::json& qemu, const ModelState& model,
                                        const SequenceGuest& guest);

// "" when query-balloon's actual is the live XML's <currentMemory> and, with a model, the model's
// balloon target; else what differs.
std::string CompareBalloon(const std::string& live_xml, const nlohmann::json& query_balloon,
                           const ModelState* model = nullptr);

}  // namespace qlaunch::testing::seq
