#include "launcher/lifecycle/start/migration_uri.h"

#include <cstdlib>
#include <stdexcept>

namespace qlaunch::launcher {

namespace {

[[noreturn]] void Bad(const std::string& text, const std::string& why, UriUse use) {
  throw std::invalid_argument("invalid migration URI '" + text + "': " + why + "; expected tcp:HOST:PORT, unix:PATH" +
                              (use == UriUse::kMigrate ? " or ssh://[USER@]HOST[:PORT]" : ""));
}

// "HOST:PORT" or "[V6]:PORT" (port required) / "HOST[:PORT]" (optional): host and port.
void SplitHostPort(const std::string& text, const std::string& hp, bool port_required, UriUse use,
                   std::string* host, int* port) {
  std::string rest;
  if (!hp.empty() && hp[0] == '[') {
    const size_t close = hp.find(']');
    if (close == std::string::npos) Bad(text, "an IPv6 address without its closing ']'", use);
    *host = hp.substr(1, close - 1);
    rest = hp.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') Bad(text, "something after the IPv6 address that is not ':PORT'", use);
  } else {
    const size_t colon = hp.rfind(':');
    *host = hp.substr(0, colon);
    if (colon != std::string::npos) rest = hp.substr(colon);
    if (host->find(':') != std::string::npos) Bad(text, "an IPv6 address must be written in brackets", use);
  }
  if (host->empty()) Bad(text, "no host", use);
  if (rest.empty()) {
    if (port_required) Bad(text, "no port", use);
    return;
  }
  const std::string p = rest.substr(1);
  char* end = nullptr;
  const long v = p.empty() ? -1 : std::strtol(p.c_str(), &end, 10);
  if (p.empty() || *end != '\0' || v < 0 || v > 65535) Bad(text, "port '" + p + "' is not a number 0-65535", use);
  *port = static_cast<int>(v);
}

}  // namespace

std::string MigrationUri::ForQemu() const {
  if (kind == Kind::kUnix) return "unix:" + path;
  if (kind == Kind::kFd) return "fd:" + path;
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return "tcp:" + h + ":" + std::to_string(port);
}

MigrationUri ParseMigrationUri(const std::string& text, UriUse use, const std::string& cwd) {
  MigrationUri u;
  if (text.rfind("tcp:", 0) == 0) {
    u.kind = MigrationUri::Kind::kTcp;
    SplitHostPort(text, text.substr(4), true, use, &u.host, &u.port);
    if (u.port == 0 && use == UriUse::kMigrate) Bad(text, "port 0 names no destination", use);
  } else if (text.rfind("unix:", 0) == 0) {
    u.kind = MigrationUri::Kind::kUnix;
    u.path = text.substr(5);
    if (u.path.empty()) Bad(text, "no socket path", use);
    if (u.path[0] != '/') u.path = (cwd.empty() || cwd.back() == '/' ? cwd : cwd + "/") + u.path;
  } else if (text.rfind("ssh://", 0) == 0 && use == UriUse::kMigrate) {
    u.kind = MigrationUri::Kind::kSsh;
    std::string rest = text.substr(6);
    if (!rest.empty() && rest.back() == '/') rest.pop_back();
    if (rest.find('/') != std::string::npos) Bad(text, "a path after the host (qlaunch takes none)", use);
    if (const size_t at = rest.find('@'); at != std::string::npos) {
      u.user = rest.substr(0, at);
      rest = rest.substr(at + 1);
      if (u.user.empty()) Bad(text, "an empty user before '@'", use);
    }
    SplitHostPort(text, rest, false, use, &u.host, &u.port);
  } else {
    Bad(text, "unknown transport", use);
  }
  return u;
}

}  // namespace qlaunch::launcher
