// Where this build's source and build trees are, for tests (fixtures, scripts, the built
// qlaunch). One file (build_paths.cc) is compiled with the two paths; every other test file names
// them through these functions, so that no other compile command holds a path of this clone and a
// clone elsewhere (CI's, in a new temporary directory each run) reuses what ccache compiled.
#pragma once

namespace qlaunch::testing {

const char* BuildSourceDir();
const char* BuildBinaryDir();

}  // namespace qlaunch::testing

#define QLAUNCH_SOURCE_DIR (::qlaunch::testing::BuildSourceDir())
#define QLAUNCH_BINARY_DIR (::qlaunch::testing::BuildBinaryDir())
