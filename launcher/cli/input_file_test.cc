// The input file check RunCli makes before a verb runs, on real files.
#include "launcher/cli/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace qlaunch::launcher {
namespace {

namespace fs = std::filesystem;

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qlaunch-input-file-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(InputFileTest, ACompleteFileIsFine) {
  std::ofstream(dir_ / "vm.xml") << "<domain/>\n";
  EXPECT_EQ(InputFileProblem((dir_ / "vm.xml").string(), false), "");
}

TEST_F(InputFileTest, AMissingFileAndADirectoryAreNamed) {
  const std::string missing = (dir_ / "missing.xml").string();
  EXPECT_EQ(InputFileProblem(missing, false), "cannot read " + missing + ": No such file or directory");
  EXPECT_EQ(InputFileProblem(dir_.string(), false), "cannot read " + dir_.string() + ": Is a directory");
  // An empty file can be read: what its parser makes of it is the verb's to say, with the file.
  std::ofstream(dir_ / "empty.xml").flush();
  EXPECT_EQ(InputFileProblem((dir_ / "empty.xml").string(), false), "");
}

TEST_F(InputFileTest, AnUnreadableFileSaysWhy) {
  const fs::path f = dir_ / "secret.xml";
  std::ofstream(f) << "<domain/>\n";
  fs::permissions(f, fs::perms::none);
  if (::access(f.c_str(), R_OK) == 0) {  // root reads it anyway: then it is fine
    EXPECT_EQ(InputFileProblem(f.string(), false), "");
  } else {
    EXPECT_EQ(InputFileProblem(f.string(), false), "cannot read " + f.string() + ": Permission denied");
  }
}

TEST_F(InputFileTest, DashIsStandardInputWhereTheVerbTakesIt) {
  EXPECT_EQ(InputFileProblem("-", true), "");
  // Elsewhere "-" is a file name like any other.
  EXPECT_EQ(InputFileProblem("-", false), "cannot read -: No such file or directory");
}

}  // namespace
}  // namespace qlaunch::launcher
