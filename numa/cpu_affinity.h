// The CPUs the calling thread may run on (sched_getaffinity).
#pragma once

#include "common/id_set.h"

namespace qlaunch::numa {

// Throws std::runtime_error when the kernel refuses the query.
IdSet CurrentCpuAffinity();

}  // namespace qlaunch::numa
