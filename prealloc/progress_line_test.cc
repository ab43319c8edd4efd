#include "prealloc/progress_line.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

namespace qlaunch::prealloc {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

TEST(ProgressLine, Formats) {
  // 3.2 GiB of 8 GiB in 1.425 s: 2.41 GB/s, 4.8 GiB left at that rate: 2.1 s.
  uint64_t done = static_cast<uint64_t>(3.2 * kGiB);
  EXPECT_EQ(FormatProgress(done, 8 * kGiB, 1.425), "prealloc: 3.2/8.0 GiB  2.41 GB/s  ETA 2.1s");
  EXPECT_EQ(FormatProgress(0, 8 * kGiB, 0.1), "prealloc: 0.0/8.0 GiB");
  EXPECT_EQ(FormatProgress(0, 8 * kGiB, 0.1, "migrate"), "migrate: 0.0/8.0 GiB");
  EXPECT_EQ(FormatProgress(8 * kGiB, 8 * kGiB, 4.0), "prealloc: 8.0/8.0 GiB  2.15 GB/s  ETA 0.0s");
}

TEST(ProgressLine, RewritesOneLine) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&buf, &len);
  ASSERT_NE(out, nullptr);
  {
    ProgressLine line(out);
    line.Update(kGiB, 8 * kGiB);
    line.Update(8 * kGiB, 8 * kGiB);
    line.Finish();
  }
  std::fclose(out);
  std::string text(buf, len);
  free(buf);
  EXPECT_EQ(text.rfind("\rprealloc: 1.0/8.0 GiB", 0), 0u) << text;
  EXPECT_NE(text.find("\rprealloc: 8.0/8.0 GiB"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace qlaunch::prealloc
