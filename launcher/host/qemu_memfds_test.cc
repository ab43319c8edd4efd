#include "launcher/host/qemu_memfds.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace qlaunch::launcher {
namespace {

constexpr size_t kBytes = 4 << 20;

// A memfd named as qlaunch names a domain's (start_memory.h), filled: this process plays QEMU.
int FilledMemfd(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, kBytes) != 0) return -1;
  std::string block(kBytes, 'x');
  if (::pwrite(fd, block.data(), block.size(), 0) != static_cast<ssize_t>(block.size())) return -1;
  return fd;
}

uint64_t BytesHeld(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? uint64_t(st.st_blocks) * 512 : ~uint64_t{0};
}

TEST(QemuMemfds, AMemfdStillMappedKeepsItsMemoryAndOneUnmappedGivesItBack) {
  const int fd = FilledMemfd("qlaunch:memfd-test:dimm0");
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const int other = FilledMemfd("qlaunch:memfd-test-2:dimm0");  // another domain's, of the same id
  ASSERT_GE(other, 0);
  ASSERT_GE(BytesHeld(fd), kBytes);

  void* map = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  EXPECT_THROW(ReleaseUnmappedMemfd(::getpid(), "memfd-test", "dimm0", std::chrono::milliseconds(100)),
               std::runtime_error);
  EXPECT_GE(BytesHeld(fd), kBytes);
  EXPECT_EQ(static_cast<const char*>(map)[kBytes - 1], 'x');
  ::munmap(map, kBytes);

  EXPECT_EQ(ReleaseUnmappedMemfd(::getpid(), "memfd-test", "dimm1"), 0u);  // no such backend
  EXPECT_GE(BytesHeld(fd), kBytes);
  EXPECT_GE(ReleaseUnmappedMemfd(::getpid(), "memfd-test", "dimm0"), kBytes);
  EXPECT_EQ(BytesHeld(fd), 0u);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), kBytes);  // the size stays: only the pages go
  EXPECT_GE(BytesHeld(other), kBytes);                  // the other domain's memfd is untouched
  ::close(fd);
  ::close(other);
}

// A DIMM of the start detached leaves its inherited memfd in QEMU; one attached since under the
// same id is the memory in use: QemuMemfds (what migrate --local hands over) names the mapped one,
// whatever the fd order.
TEST(QemuMemfds, OfTwoMemfdsOfOneIdTheMappedOneIsTheBackend) {
  const int stale = FilledMemfd("qlaunch:memfd-test-3:memdimm0");
  const int live = FilledMemfd("qlaunch:memfd-test-3:memdimm0");
  ASSERT_GE(stale, 0);
  ASSERT_GE(live, 0);
  ASSERT_LT(stale, live);
  void* map = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, live, 0);
  ASSERT_NE(map, MAP_FAILED);
  const auto got = QemuMemfds(::getpid(), "memfd-test-3");
  ASSERT_EQ(got.count("memdimm0"), 1u);
  EXPECT_EQ(got.at("memdimm0"), "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(live));
  ::munmap(map, kBytes);
  // Neither mapped: both freed.
  EXPECT_GE(ReleaseUnmappedMemfd(::getpid(), "memfd-test-3", "memdimm0", std::chrono::milliseconds(100)), 2 * kBytes);
  EXPECT_EQ(BytesHeld(stale), 0u);
  EXPECT_EQ(BytesHeld(live), 0u);
  ::close(stale);
  ::close(live);
}

}  // namespace
}  // namespace qlaunch::launcher
