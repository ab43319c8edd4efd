#include "launcher/host/disk_backing.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

// A qcow2 header (version 3) naming `backing` (none when empty), 512 bytes.
void WriteQcow2(const fs::path& path, const std::string& backing) {
  std::string h(512, '\0');
  auto put = [&](size_t at, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i, v >>= 8) h[at + i] = static_cast<char>(v & 0xff);
  };
  put(0, 0x514649fb, 4);
  put(4, 3, 4);
  if (!backing.empty()) {
    put(8, 200, 8);
    put(16, backing.size(), 4);
    h.replace(200, backing.size(), backing);
  }
  std::ofstream(path, std::ios::binary) << h;
}

TEST(QcowBackingChain, FollowsRelativeAndAbsoluteNamesAndStops) {
  fs::path dir = fs::temp_directory_path() / ("qlaunch-backing-" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "base.raw") << "raw data";
  WriteQcow2(dir / "sub" / "mid.qcow2", (dir / "base.raw").string());  // absolute
  WriteQcow2(dir / "top.qcow2", "sub/mid.qcow2");                       // relative to top's dir
  EXPECT_EQ(QcowBackingChain((dir / "top.qcow2").string()),
            (std::vector<std::string>{(dir / "sub" / "mid.qcow2").string(), (dir / "base.raw").string()}));
  WriteQcow2(dir / "alone.qcow2", "");
  EXPECT_TRUE(QcowBackingChain((dir / "alone.qcow2").string()).empty());
  EXPECT_TRUE(QcowBackingChain((dir / "base.raw").string()).empty());   // not a qcow2
  WriteQcow2(dir / "loop.qcow2", "loop.qcow2");
  EXPECT_TRUE(QcowBackingChain((dir / "loop.qcow2").string()).empty());
  WriteQcow2(dir / "nbd.qcow2", "nbd://host/x");
  EXPECT_TRUE(QcowBackingChain((dir / "nbd.qcow2").string()).empty());
  WriteQcow2(dir / "gone.qcow2", "missing.qcow2");
  EXPECT_TRUE(QcowBackingChain((dir / "gone.qcow2").string()).empty());
  EXPECT_TRUE(QcowBackingChain((dir / "nothing-here").string()).empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qlaunch::launcher
