// Byte sizes on the command line: "512M", "8G", "1GiB", "2MB", "4096" (libvirt's units:
// k/K/KiB, M/MiB, G/GiB, T/TiB are powers of 1024; KB/MB/GB/TB powers of 1000; b/bytes or no
// unit means bytes), and their human rendering ("2 MiB", "1 GiB", "3.2 GiB").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qlaunch::prealloc {

// std::nullopt for garbage, unknown units, fractions of a byte or overflow.
std::optional<uint64_t> ParseByteSize(std::string_view text);

// Exact power-of-1024 rendering when it is one ("4 KiB", "2 MiB", "1 GiB"), else bytes.
std::string FormatPageSize(uint64_t bytes);

// One decimal in the largest binary unit that fits ("3.2 GiB", "512.0 MiB", "100 B").
std::string FormatBytes(uint64_t bytes);

}  // namespace qlaunch::prealloc
