// The URIs `start --incoming`, `run --incoming` and `migrate` take, checked before anything is
// done, so a typo is an error naming the URI rather than a QEMU error half-way:
//   tcp:HOST:PORT       HOST a name, an IPv4 address or [IPv6]; PORT 0-65535 (0: a free port,
//                       for --incoming only; the port QEMU took is reported)
//   unix:PATH           a UNIX socket; a relative PATH is made absolute here (QEMU runs in /)
//   ssh://[USER@]HOST[:PORT]   (migrate only) qlaunch prepares the destination itself over ssh
// and, never from users (the parser refuses it), kFd: "fd:NAME", a file descriptor qlaunch handed
// QEMU with `getfd` under NAME (`restore` reads its stream from the save file so).
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>

namespace qlaunch::launcher {

struct MigrationUri {
  enum class Kind { kTcp, kUnix, kSsh, kFd };
  Kind kind = Kind::kTcp;
  std::string host;  // tcp, ssh (without brackets)
  int port = 0;      // tcp; ssh (0: ssh's default)
  std::string user;  // ssh
  std::string path;  // unix, absolute; fd: the getfd name
  // As QEMU takes it (tcp, unix): "tcp:HOST:PORT" (IPv6 in brackets), "unix:/abs/path", "fd:NAME".
  std::string ForQemu() const;
};

enum class UriUse { kIncoming, kMigrate };

// Throws std::invalid_argument("invalid migration URI 'X': why; expected tcp:HOST:PORT, ...").
// `cwd` makes a relative unix path absolute.
MigrationUri ParseMigrationUri(const std::string& text, UriUse use, const std::string& cwd);

}  // namespace qlaunch::launcher
