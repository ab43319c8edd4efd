// QmpClient: a synchronous QMP client over a UNIX socket (Boost.Asio), every call bounded by
// a timeout. Used by the capability probe and by the launcher.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace qlaunch::qemu {

class QmpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class QmpTimeout : public QmpError {
 public:
  using QmpError::QmpError;
};
// The peer closed the connection (QEMU exited or was killed): no answer will come, at once
// rather than after a wait. A QmpTimeout for callers that only care that no answer came.
class QmpClosed : public QmpTimeout {
 public:
  using QmpTimeout::QmpTimeout;
};

class QmpClient {
 public:
  ~QmpClient();
  QmpClient(const QmpClient&) = delete;
  QmpClient& operator=(const QmpClient&) = delete;

  // Connects (retrying while the socket does not exist yet or refuses) until `timeout`,
  // then reads the greeting. Does not send qmp_capabilities. With wait_for_server false (the
  // caller made the listening socket and handed it to QEMU), a missing or refusing socket
  // means its server is gone: QmpClosed at once.
  static std::unique_ptr<QmpClient> Connect(const std::string& socket_path, std::chrono::milliseconds timeout,
                                            bool wait_for_server = true);

  const nlohmann::json& Greeting() const { return greeting_; }

  // Sends {"execute": command, "arguments": args} and waits for its reply; events that
  // arrive meanwhile are queued. Returns the "return" member. Throws QmpError with QEMU's
  // error description, QmpTimeout when no reply comes in time or the peer closes.
  nlohmann::json Execute(const std::string& command, const nlohmann::json& args = nullptr,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Execute, running `meanwhile` in this thread once the command is sent and before its reply is
  // read: work of the caller's that needs no answer overlaps QEMU's (the deadline covers both).
  nlohmann::json ExecuteOverlapped(const std::string& command, const nlohmann::json& args,
                                   std::chrono::milliseconds timeout, const std::function<void()>& meanwhile);

  // Execute, passing `fd` along with the command (SCM_RIGHTS), as `getfd` and `add-fd` take
  // one. The caller keeps its copy of the fd.
  nlohmann::json ExecuteWithFd(const std::string& command, const nlohmann::json& args, int fd,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Waits until an event named `name` has arrived (queued ones count). Returns it; throws
  // QmpTimeout.
  nlohmann::json WaitEvent(const std::string& name, std::chrono::milliseconds timeout);
  std::vector<nlohmann::json> TakeEvents();
  // The next event (queued first), waiting up to `timeout`; nullopt when none came. Throws
  // QmpClosed when QEMU closes the connection.
  std::optional<nlohmann::json> NextEvent(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  nlohmann::json Run(const std::string& command, const nlohmann::json& args, int fd, std::chrono::milliseconds timeout,
                     const std::function<void()>* meanwhile = nullptr);
  explicit QmpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  nlohmann::json greeting_;
};

}  // namespace qlaunch::qemu
