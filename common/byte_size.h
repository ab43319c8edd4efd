// Byte sizes with libvirt's units (virScaleInteger, libvirt 9.0), shared by the domain XML
// and the command line: b/byte/bytes = 1; for the letters k m g t p e, case-insensitive, a bare
// letter or "<letter>iB" is a power of 1024 and "<letter>B" a power of 1000. Also their human
// rendering ("2 MiB", "1 GiB", "3.2 GiB").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qlaunch {

// Bytes per unit; std::nullopt for an unknown unit (and for "", which callers give a meaning).
std::optional<uint64_t> UnitScale(std::string_view unit);

// A size as one string, as on the command line: "512M", "8G", "1 GiB", "1.5G", "2MB", "4096"
// (no unit: bytes). std::nullopt for garbage, unknown units, fractions of a byte or overflow.
std::optional<uint64_t> ParseByteSize(std::string_view text);

// Exact power-of-1024 rendering when it is one ("4 KiB", "2 MiB", "1 GiB"), else bytes.
std::string FormatPageSize(uint64_t bytes);

// One decimal in the largest binary unit that fits ("3.2 GiB", "512.0 MiB", "100 B").
std::string FormatBytes(uint64_t bytes);

}  // namespace qlaunch
