// The file `qlaunch save` writes and `qlaunch restore` reads: qlaunch's own header, then QEMU's
// migration stream as QEMU wrote it (`migrate` to an fd qlaunch opened). Little-endian:
//   0   16 bytes  magic "QLAUNCH-SAVE\0\0\0\0"
//   16  u32       version (1)
//   20  u32       flags: bit 0 = the guest ran before the save (restore resumes it)
//   24  u64       XML length
//   32  u64       stream offset: where QEMU's stream starts (the header and XML rounded up to 4 KiB)
//   40  u64       stream length, written once QEMU is done (0: the save did not finish)
//   48  the domain's live XML (`qlaunch dumpxml`), then zeros up to the stream offset
// Encode is pure; ReadSaveHeader reads an open file.
#pragma once

#include <cstdint>
#include <string>

namespace qlaunch::launcher {

inline constexpr uint32_t kSaveVersion = 1;
inline constexpr uint64_t kSaveFixedSize = 48;
inline constexpr uint64_t kSaveLengthOffset = 40;  // where the stream length goes
inline constexpr uint64_t kSaveMaxXml = 16u << 20;

struct SaveHeader {
  bool ran = false;
  std::string xml;
  uint64_t stream_offset = 0;
  uint64_t stream_length = 0;
};

// The bytes from offset 0 to the stream offset (stream_length as given, normally 0 at first).
std::string EncodeSaveHeader(const SaveHeader& h);
// The 8 bytes to write at kSaveLengthOffset once the stream's length is known.
std::string EncodeSaveLength(uint64_t length);

// Reads and checks the header of `fd` (its offset is left as it was: pread), and that the file is
// as long as the header says. Throws std::runtime_error naming `file`: not a qlaunch save file
// (magic), a version this qlaunch does not know, a save that did not finish, a truncated file.
SaveHeader ReadSaveHeader(int fd, const std::string& file);

}  // namespace qlaunch::launcher
