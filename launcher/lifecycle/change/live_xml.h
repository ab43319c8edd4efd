// The live domain XML of a running domain, as libvirt 9.0's `virsh dumpxml` prints it: the XML
// as given, with what the start decided filled in. Pure (no I/O): a function of what the state
// dir records of the domain (domain.xml, plan.json, devices.json) and of a few facts QEMU
// reports (pty paths, DIMM addresses), so it is tested on tables of inputs.
//
// Added, as libvirt adds them:
//   <domain id='N'>                     the running domain's id (qlaunch: QEMU's pid)
//   <alias name='...'/>                 on every device: the id qlaunch gave QEMU (plan.json)
//   <address type='pci' .../>           the PCI address qlaunch assigned; <address
//                                       type='virtio-serial'> of channels and virtio consoles
//   <controller>s the XML left implied  the root ports and bridges the assignment added, the
//                                       machine's built-in pci-root/pcie-root, q35's sata, pc's
//                                       ide when a disk is on it, an implied virtio-serial, usb or
//                                       scsi controller (and index= where the XML left it out)
//   <memballoon model='virtio'>         when the XML has none (libvirt adds it on x86)
//   <interface>: <mac> chosen, <target dev> of its tap, <model type>
//   <graphics>: port= actually bound, listen= and <listen type='address'>
//   <serial>/<console> of type pty: tty= and <source path> (QEMU's query-chardev)
//   <channel type='unix'> without a path: <source mode='bind' path=...> (the state dir's)
//   <memory model='dimm|nvdimm'>: alias, <address type='dimm' slot= base=> where known
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace qlaunch::launcher {

struct LiveXmlInput {
  std::string domain_xml;         // the XML as given (the state dir's domain.xml)
  std::string file;               // its path, for diagnostics
  nlohmann::json plan;            // plan.json (qemu::ToJson of the LaunchPlan it was started with)
  nlohmann::json devices = nlohmann::json::object();  // devices.json (launcher/host/device_host.h Summary)
  std::optional<long> id;         // <domain id=...>
  std::string channel_dir;        // where unix channels without a path have their socket
  std::map<std::string, std::string> ptys;  // chardev id ("charserial0") -> "/dev/pts/N"
  std::map<std::string, uint64_t> dimm_bases;  // memory device id ("dimm0") -> guest address
  std::optional<uint64_t> balloon_bytes;  // the balloon's actual size (query-balloon), when there is one
};

// Throws DiagnosticError when domain_xml does not parse, std::runtime_error when plan.json has no
// device record (a domain started by a qlaunch older than dumpxml).
std::string LiveDomainXml(const LiveXmlInput& in);

}  // namespace qlaunch::launcher
