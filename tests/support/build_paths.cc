#include "support/build_paths.h"

namespace qlaunch::testing {

const char* BuildSourceDir() { return QLAUNCH_SOURCE_PATH; }
const char* BuildBinaryDir() { return QLAUNCH_BINARY_PATH; }

}  // namespace qlaunch::testing
