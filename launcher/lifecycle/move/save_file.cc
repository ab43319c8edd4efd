#include "launcher/lifecycle/move/save_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

namespace qlaunch::launcher {

namespace {

constexpr char kMagic[16] = {'Q', 'L', 'A', 'U', 'N', 'C', 'H', '-', 'S', 'A', 'V', 'E', 0, 0, 0, 0};
constexpr uint64_t kAlign = 4096;

void Put(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t Get(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}

[[noreturn]] void Bad(const std::string& file, const std::string& why) {
  throw std::runtime_error("cannot restore from " + file + ": " + why);
}

std::string PRead(int fd, uint64_t offset, uint64_t n, const std::string& file) {
  std::string buf(n, '\0');
  uint64_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, buf.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) Bad(file, std::string("read: ") + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<uint64_t>(r);
  }
  buf.resize(got);
  return buf;
}

}  // namespace

std::string EncodeSaveHeader(const SaveHeader& h) {
  std::string out(kMagic, sizeof kMagic);
  Put(&out, kSaveVersion, 4);
  Put(&out, h.ran ? 1 : 0, 4);
  Put(&out, h.xml.size(), 8);
  const uint64_t offset = (kSaveFixedSize + h.xml.size() + kAlign - 1) / kAlign * kAlign;
  Put(&out, offset, 8);
  Put(&out, h.stream_length, 8);
  out += h.xml;
  out.resize(offset, '\0');
  return out;
}

std::string EncodeSaveLength(uint64_t length) {
  std::string out;
  Put(&out, length, 8);
  return out;
}

SaveHeader ReadSaveHeader(int fd, const std::string& file) {
  const std::string fixed = PRead(fd, 0, kSaveFixedSize, file);
  if (fixed.size() < sizeof kMagic || std::memcmp(fixed.data(), kMagic, sizeof kMagic) != 0)
    Bad(file, "not a qlaunch save file (no QLAUNCH-SAVE header; `qlaunch save` writes them)");
  if (fixed.size() < kSaveFixedSize) Bad(file, "truncated: the file ends inside its header");
  const uint64_t version = Get(fixed, 16, 4);
  if (version != kSaveVersion)
    Bad(file, "save file version " + std::to_string(version) + ", this qlaunch reads version " +
                  std::to_string(kSaveVersion));
  SaveHeader h;
  h.ran = (Get(fixed, 20, 4) & 1) != 0;
  const uint64_t xml_len = Get(fixed, 24, 8);
  h.stream_offset = Get(fixed, 32, 8);
  h.stream_length = Get(fixed, kSaveLengthOffset, 8);
  if (xml_len > kSaveMaxXml || h.stream_offset < kSaveFixedSize + xml_len || h.stream_offset % kAlign != 0)
    Bad(file, "corrupt header (XML length " + std::to_string(xml_len) + ", stream offset " +
                  std::to_string(h.stream_offset) + ")");
  if (h.stream_length == 0) Bad(file, "the save that wrote it did not finish (no stream length)");
  struct stat st {};
  if (::fstat(fd, &st) != 0) Bad(file, std::string("stat: ") + std::strerror(errno));
  const uint64_t want = h.stream_offset + h.stream_length;
  if (static_cast<uint64_t>(st.st_size) < want)
    Bad(file, "truncated: " + std::to_string(st.st_size) + " bytes, its header says " + std::to_string(want));
  h.xml = PRead(fd, kSaveFixedSize, xml_len, file);
  if (h.xml.size() != xml_len) Bad(file, "truncated: the file ends inside its XML");
  return h;
}

}  // namespace qlaunch::launcher
