// The guest of the verb sequence tests (issue 34): Debian's kernel with the busybox initramfs of
// tests/boot/migrate-init, which fills a buffer with random bytes, reports its MD5 ("sum"), then
// counts on its console and sums the buffer again every few counts ("count N", "resum MD5"). Its
// domain is the model's (verb_model.h's Limits): a pc machine under TCG with 1 of 2 vCPUs plugged,
// 256 MiB in one cell on shared 2 MiB hugetlb memfds (what `migrate --local` hands over) with a
// virtio balloon, one DIMM slot, a virtio boot disk vda, an empty IDE cdrom hdc, its console a
// file. And the files its verbs take: a virtio disk vdb, a virtio NIC on user networking, a
// 128 MiB DIMM, the cdrom images a and b.
#pragma once

#include <filesystem>
#include <string>

#include "support/hotplug_guest.h"
#include "support/verb_model.h"

namespace qlaunch::testing::seq {

// The domain's name: "seq", or QLAUNCH_SEQ_DOMAIN's (scripts/soak runs workers side by side, each
// its own domain: its memfds, state entries and hugepage count are told apart by the name).
const std::string& SequenceDomain();
inline constexpr const char* kCdromTarget = "hdc";
inline constexpr const char* kNicMac = "52:54:00:5e:71:01";
inline constexpr unsigned kBufferMib = 32;  // the guest's random buffer
inline constexpr unsigned kResumEvery = 4;  // counts between its sums of the buffer

struct SequenceGuest {
  HotplugGuest boot;  // kernel and initramfs (its serial: the console of the first QEMU)
  std::filesystem::path dir;

  // A console of its own for each QEMU the guest runs under (console-N.log), so that a step's
  // reports are told apart from the last QEMU's.
  std::filesystem::path Console(unsigned n) const;
  std::string DomainXml() const;  // with Console(0)
  std::string DeviceFile(Op op) const;  // the attach/detach file of a disk, NIC or DIMM step
  std::filesystem::path Image(unsigned media) const;  // kImageA, kImageB; the boot disk for kBootDisk
};

// Builds the kernel and initramfs in `boot_dir` (once, shared by the sequences; `missing` says why
// not), and each sequence's files in `dir`: the images (the boot disk and vdb 1 MiB each, the cdrom
// images named inside) and the device files.
HotplugGuest MakeSequenceBoot(const std::filesystem::path& boot_dir);
SequenceGuest MakeSequenceGuest(const HotplugGuest& boot, const std::filesystem::path& dir);

}  // namespace qlaunch::testing::seq
