// The backing chain of a qcow2 image, read from the images' headers: the files QEMU opens
// read-only behind a <disk> (libvirt finds them the same way and relabels them too).
#pragma once

#include <string>
#include <vector>

namespace qlaunch::launcher {

// The backing files of `image`, nearest first, with relative names resolved against the
// directory of the image that names them. Stops at a raw (non-qcow2) or missing file, a
// protocol or json: name (not a local file), a loop, or 32 levels. Empty when `image` is not
// a readable qcow2 or has no backing file.
std::vector<std::string> QcowBackingChain(const std::string& image);

}  // namespace qlaunch::launcher
