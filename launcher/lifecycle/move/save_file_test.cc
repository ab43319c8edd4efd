#include "launcher/lifecycle/move/save_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

// A memfd holding `bytes`, as a save file would.
int FileWith(const std::string& bytes) {
  const int fd = ::memfd_create("save", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  return fd;
}

std::string ErrorOf(const std::string& bytes) {
  const int fd = FileWith(bytes);
  try {
    ReadSaveHeader(fd, "/x/vm.save");
  } catch (const std::runtime_error& e) {
    ::close(fd);
    return e.what();
  }
  ::close(fd);
  return "";
}

std::string Saved(bool ran, const std::string& xml, const std::string& stream) {
  SaveHeader h;
  h.ran = ran;
  h.xml = xml;
  h.stream_length = stream.size();
  return EncodeSaveHeader(h) + stream;
}

TEST(SaveFile, RoundTrip) {
  for (bool ran : {true, false}) {
    const std::string xml = "<domain><name>vm1</name></domain>";
    const std::string bytes = Saved(ran, xml, "QEVM stream bytes");
    const int fd = FileWith(bytes);
    const SaveHeader h = ReadSaveHeader(fd, "vm.save");
    ::close(fd);
    EXPECT_EQ(h.ran, ran);
    EXPECT_EQ(h.xml, xml);
    EXPECT_EQ(h.stream_offset, 4096u);
    EXPECT_EQ(h.stream_length, 17u);
    EXPECT_EQ(bytes.substr(h.stream_offset), "QEVM stream bytes");
  }
}

TEST(SaveFile, StreamOffsetIsPageAlignedPastTheXml) {
  SaveHeader h;
  h.xml = std::string(4096 - kSaveFixedSize, 'x');
  EXPECT_EQ(EncodeSaveHeader(h).size(), 4096u);
  h.xml += 'y';
  EXPECT_EQ(EncodeSaveHeader(h).size(), 8192u);
}

TEST(SaveFile, LengthWrittenAfterwards) {
  SaveHeader h;
  h.xml = "<domain/>";
  std::string bytes = EncodeSaveHeader(h) + "stream";
  EXPECT_NE(ErrorOf(bytes).find("did not finish"), std::string::npos);
  bytes.replace(kSaveLengthOffset, 8, EncodeSaveLength(6));
  EXPECT_EQ(ErrorOf(bytes), "");
}

TEST(SaveFile, BadMagicNamesTheFile) {
  EXPECT_EQ(ErrorOf("<domain type='kvm'>...</domain>"),
            "cannot restore from /x/vm.save: not a qlaunch save file (no QLAUNCH-SAVE header; `qlaunch save` writes "
            "them)");
  EXPECT_NE(ErrorOf("").find("not a qlaunch save file"), std::string::npos);
}

TEST(SaveFile, Truncated) {
  const std::string bytes = Saved(true, "<domain/>", std::string(10000, 's'));
  EXPECT_NE(ErrorOf(bytes.substr(0, 30)).find("truncated: the file ends inside its header"), std::string::npos);
  EXPECT_NE(ErrorOf(bytes.substr(0, 50)).find("truncated: 50 bytes, its header says 14096"), std::string::npos);
  EXPECT_NE(ErrorOf(bytes.substr(0, bytes.size() - 1)).find("truncated"), std::string::npos);
}

TEST(SaveFile, CorruptHeader) {
  std::string bytes = Saved(true, "<domain/>", "s");
  bytes[16] = 9;  // version
  EXPECT_NE(ErrorOf(bytes).find("save file version 9"), std::string::npos);
  bytes = Saved(true, "<domain/>", "s");
  bytes.replace(24, 8, EncodeSaveLength(uint64_t{1} << 40));  // XML length
  EXPECT_NE(ErrorOf(bytes).find("corrupt header"), std::string::npos);
}

}  // namespace
}  // namespace qlaunch::launcher
