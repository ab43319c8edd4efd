// What change-media records of a running domain in its state dir, beside what
// launcher/lifecycle/change/running_def.h records of attached and detached devices:
//
//   <dir>/running.xml   domain.xml with each changed cdrom's <source> as it is now (none when
//                       ejected); what dumpxml and domblklist read when it exists. Every other
//                       byte, the lines of the elements included, stays as in domain.xml, so the
//                       plan's device records (by line) still find their elements.
//   <dir>/media.json    {"next_node_index": N, "nodes": {"sda": "libvirt-4"}}: libvirt's next
//                       storage-source index (its nodenameindex: the start used 1..disks) and
//                       the node prefix of each changed drive's medium.
//
// Both are written with write-temp+rename.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace qlaunch::launcher {

struct MediaNodes {
  unsigned next_node_index = 0;               // 0: none recorded yet (the start's: disks + 1)
  std::map<std::string, std::string> nodes;   // target dev -> node prefix ("" when ejected)
};
MediaNodes ReadMediaNodes(const std::filesystem::path& dir);

// `xml` with the <disk> whose <target dev> is `target` given `source` (type 'file' or 'block',
// <source file=> or <source dev=>), or no <source> when `source` is empty. Pure. Lines of all
// elements are kept (the new <source> goes on the line of the disk's <target>). Throws
// DiagnosticError when the XML does not parse, std::invalid_argument when no disk has that target.
std::string WithDiskSource(const std::string& xml, const std::string& file, const std::string& target,
                           const std::string& type, const std::string& source);

// Records a changed medium: running.xml (from running.xml or domain.xml) with the disk's new
// source, media.json with `node` as the drive's node prefix and `next_node_index`. Throws
// std::runtime_error (with the path) when a file cannot be read or written.
// A drive detached: media.json forgets its medium's node (a disk attached later on the same
// target starts from its own).
void ForgetMedia(const std::filesystem::path& dir, const std::string& target);

void RecordMediaChange(const std::filesystem::path& dir, const std::string& target, const std::string& type,
                       const std::string& source, const std::string& node, unsigned next_node_index);

}  // namespace qlaunch::launcher
