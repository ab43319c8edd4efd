#include "launcher/bench/bench_starters.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

class RunChildTest : public ::testing::Test {
 protected:
  // The child's stdout so far, once it holds a whole line (10 s at most).
  std::string FirstLineOf(const std::string& tag) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(dir_ / (tag + ".out"));
      std::string line;
      if (std::getline(in, line) && !in.eof()) return line;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return "";
  }

  testing::TempDir tmp_{"qlaunch-runchild"};
  const fs::path dir_ = tmp_.path;
};

TEST_F(RunChildTest, MeanwhileRunsWhileTheChildRunsAndTheChildIsWaitedForAfterIt) {
  const fs::path flag = dir_ / "flag";
  // The child says it is up, then waits for the flag that only `meanwhile` makes.
  const std::vector<std::string> argv = {"/bin/sh", "-c",
                                         "echo up; while [ ! -e '" + flag.string() + "' ]; do sleep 0.01; done"};
  std::string seen;
  ChildRun run = RunChild(argv, dir_, "child", nullptr, std::chrono::seconds(30), [&] {
    seen = FirstLineOf("child");
    std::ofstream(flag) << "go";
  });
  EXPECT_EQ(seen, "up");
  EXPECT_TRUE(run.ok()) << run.Describe();
  EXPECT_FALSE(run.timed_out);
}

TEST_F(RunChildTest, AThrowingMeanwhileKillsAndReapsTheChild) {
  const std::vector<std::string> argv = {"/bin/sh", "-c", "echo $$; exec sleep 30"};
  pid_t child = 0;
  EXPECT_THROW(RunChild(argv, dir_, "child", nullptr, {},
                        [&] {
                          child = static_cast<pid_t>(std::stol(FirstLineOf("child")));
                          throw std::runtime_error("the floor failed");
                        }),
               std::runtime_error);
  ASSERT_GT(child, 0);
  errno = 0;
  EXPECT_EQ(::kill(child, 0), -1) << "the child " << child << " is still there";
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace qlaunch::launcher
