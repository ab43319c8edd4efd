#include "support/sequence_guest.h"

#include <cstdlib>
#include <fstream>

#include "support/launch_env.h"

namespace qlaunch::testing::seq {

namespace fs = std::filesystem;

namespace {

// A raw image of 1 MiB whose first bytes name it (a guest that reads it sees which it got).
void MakeImage(const fs::path& p) {
  std::string block(1 << 20, '\0');
  block.replace(0, p.filename().string().size(), p.filename().string());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << block;
}

std::string DiskXml(const std::string& device, const fs::path& file, const std::string& target, const std::string& bus) {
  return "<disk type='file' device='" + device + "'><driver name='qemu' type='raw'/>" +
         (file.empty() ? "" : "<source file='" + file.string() + "'/>") + "<target dev='" + target + "' bus='" + bus +
         "'/>" + (device == "cdrom" ? "<readonly/>" : "") + "</disk>\n";
}

}  // namespace

const std::string& SequenceDomain() {
  static const std::string name = [] {
    const char* v = std::getenv("QLAUNCH_SEQ_DOMAIN");
    return std::string(v && *v ? v : "seq");
  }();
  return name;
}

fs::path SequenceGuest::Console(unsigned n) const { return dir / ("console-" + std::to_string(n) + ".log"); }

fs::path SequenceGuest::Image(unsigned media) const {
  switch (media) {
    case kImageA: return dir / "a.iso";
    case kImageB: return dir / "b.iso";
    default: return dir / "vda.raw";
  }
}

std::string SequenceGuest::DeviceFile(Op op) const {
  switch (op) {
    case Op::kAttachDisk:
    case Op::kDetachDisk: return (dir / "disk.xml").string();
    case Op::kAttachNic:
    case Op::kDetachNic: return (dir / "nic.xml").string();
    default: return (dir / "dimm.xml").string();
  }
}

std::string SequenceGuest::DomainXml() const {
  const Limits l;
  const std::string mib = "' unit='MiB'";
  // memhp_default_state=online_movable: the guest onlines a DIMM where it can give it back.
  return std::string("<domain type='qemu'>\n  <name>") + SequenceDomain() + "</name>\n" +
         "  <maxMemory slots='1" + mib + ">1024</maxMemory>\n  <memory unit='MiB'>" + std::to_string(l.memory_mib) +
         "</memory>\n  <memoryBacking><hugepages/><source type='memfd'/><access mode='shared'/></memoryBacking>\n" +
         "  <vcpu placement='static' current='1'>" + std::to_string(l.max_vcpus) + "</vcpu>\n" +
         "  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n" +
         boot.OsXml("memhp_default_state=online_movable qlaunch.buf_mib=" + std::to_string(kBufferMib) +
                    " qlaunch.resum_every=" + std::to_string(kResumEvery)) +
         "  </os>\n" +
         "  <features><acpi/><apic/></features>\n" +
         "  <cpu mode='custom'><model>qemu64</model><topology sockets='" + std::to_string(l.max_vcpus) +
         "' cores='1' threads='1'/>\n    <numa><cell id='0' cpus='0-" + std::to_string(l.max_vcpus - 1) +
         "' memory='" + std::to_string(l.memory_mib) + mib + "/></numa>\n  </cpu>\n" +
         "  <devices>\n    <emulator>" + kQemu72 + "</emulator>\n    " +
         DiskXml("disk", Image(kBootDisk), "vda", "virtio") + "    " + DiskXml("cdrom", {}, kCdromTarget, "ide") +
         "    <serial type='file'><source path='" + Console(0).string() + "'/></serial>\n" +
         "    <memballoon model='virtio'/>\n  </devices>\n</domain>\n";
}

HotplugGuest MakeSequenceBoot(const fs::path& boot_dir) {
  fs::create_directories(boot_dir);
  return MakeHotplugGuest(boot_dir, "migrate-init");
}

SequenceGuest MakeSequenceGuest(const HotplugGuest& boot, const fs::path& dir) {
  SequenceGuest g{boot, dir};
  fs::create_directories(dir);
  g.boot.serial = g.Console(0);
  for (const char* image : {"vda.raw", "vdb.raw", "a.iso", "b.iso"}) MakeImage(dir / image);
  std::ofstream(g.DeviceFile(Op::kAttachDisk)) << DiskXml("disk", dir / "vdb.raw", "vdb", "virtio");
  std::ofstream(g.DeviceFile(Op::kAttachNic))
      << "<interface type='user'><mac address='" << kNicMac << "'/><model type='virtio'/></interface>\n";
  std::ofstream(g.DeviceFile(Op::kAttachDimm))
      << "<memory model='dimm'><target><size unit='MiB'>" << Limits{}.dimm_mib
      << "</size><node>0</node></target></memory>\n";
  return g;
}

}  // namespace qlaunch::testing::seq
