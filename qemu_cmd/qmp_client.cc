// QmpClient over Boost.Asio. Every blocking step is an async operation run on a private
// io_context until it completes or its deadline passes; on the deadline the operation is
// cancelled and drained, so nothing outlives the call and nothing waits forever.
#include "qemu_cmd/qmp_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

namespace qlaunch::qemu {

namespace asio = boost::asio;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using Local = asio::local::stream_protocol;
using boost::system::error_code;

namespace {

constexpr size_t kMaxMessageBytes = 64u << 20;  // query-qmp-schema is ~0.3 MB; be generous

Clock::time_point DeadlineAfter(std::chrono::milliseconds timeout) {
  // Saturate: a caller passing milliseconds::max() means "very long", not overflow.
  constexpr auto kLongest = std::chrono::hours(24 * 365);
  if (timeout > kLongest) timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kLongest);
  if (timeout.count() < 0) timeout = std::chrono::milliseconds(0);
  return Clock::now() + timeout;
}

bool IsPeerGone(const error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::not_connected;
}

}  // namespace

struct QmpClient::Impl {
  asio::io_context io{1};
  Local::socket sock{io};
  asio::streambuf buf{kMaxMessageBytes};
  std::deque<json> events;
  uint64_t next_id = 1;
  std::string path;
  bool closed = false;  // peer closed, or a write was cut short: the stream is unusable

  // Runs the io_context until `done` or `deadline`. On the deadline, cancels the pending
  // operation and runs its handler (which then sees operation_aborted, unless it had already
  // completed).
  void Run(const bool& done, Clock::time_point deadline) {
    io.restart();
    io.poll();
    while (!done && Clock::now() < deadline) {
      if (io.run_one_until(deadline) == 0 && io.stopped()) io.restart();
    }
    if (!done) {
      error_code ignored;
      sock.cancel(ignored);
      io.restart();
      while (!done && io.run_one() > 0) {
      }
    }
  }

  void ThrowIfClosed(const std::string& what) const {
    if (closed) throw QmpClosed("QMP " + what + ": connection to " + path + " is closed");
  }

  std::optional<std::string> TakeBufferedLine() {
    std::string_view data(static_cast<const char*>(buf.data().data()), buf.size());
    size_t nl = data.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    std::string line(data.substr(0, nl));
    buf.consume(nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    return line;
  }

  // Reads one JSON message (one line). Throws QmpTimeout on deadline or EOF.
  json ReadMessage(Clock::time_point deadline, const std::string& what) {
    for (;;) {
      if (auto line = TakeBufferedLine()) {
        if (line->find_first_not_of(" \t") == std::string::npos) continue;
        try {
          return json::parse(*line);
        } catch (const json::parse_error& e) {
          throw QmpError("QMP " + what + ": malformed message from " + path + ": " + e.what());
        }
      }
      ThrowIfClosed(what);
      bool done = false;
      error_code err;
      asio::async_read_until(sock, buf, '\n', [&](const error_code& ec, size_t) {
        err = ec;
        done = true;
      });
      Run(done, deadline);
      if (err == asio::error::operation_aborted) throw QmpTimeout("QMP " + what + ": timed out waiting for " + path);
      if (IsPeerGone(err)) {
        closed = true;
        throw QmpClosed("QMP " + what + ": " + path + " closed the connection");
      }
      if (err == asio::error::not_found) {
        closed = true;
        throw QmpError("QMP " + what + ": message from " + path + " exceeds " + std::to_string(kMaxMessageBytes) +
                       " bytes");
      }
      if (err) throw QmpError("QMP " + what + ": reading " + path + ": " + err.message());
    }
  }

  void Write(const std::string& data, Clock::time_point deadline, const std::string& what) {
    ThrowIfClosed(what);
    bool done = false;
    error_code err;
    asio::async_write(sock, asio::buffer(data), [&](const error_code& ec, size_t) {
      err = ec;
      done = true;
    });
    Run(done, deadline);
    if (err) closed = true;  // a partial message may have been sent: nothing sensible can follow
    if (err == asio::error::operation_aborted) throw QmpTimeout("QMP " + what + ": timed out sending to " + path);
    if (IsPeerGone(err)) throw QmpClosed("QMP " + what + ": " + path + " closed the connection");
    if (err) throw QmpError("QMP " + what + ": writing " + path + ": " + err.message());
  }
};

namespace {

// Sends `data` with `fd` attached in one sendmsg (the fd rides on the first byte), then the rest
// if the kernel took only part; waits for room until the deadline. Returns 0 or an errno.
int SendWithFd(int sock, const std::string& data, int fd, Clock::time_point deadline) {
  size_t sent = 0;
  bool fd_sent = false;
  while (sent < data.size()) {
    msghdr msg{};
    iovec iov{const_cast<char*>(data.data() + sent), data.size() - sent};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (!fd_sent) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
      fd_sent = true;
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return errno;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ETIMEDOUT;
    pollfd p{sock, POLLOUT, 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
  }
  return 0;
}

}  // namespace

QmpClient::QmpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

QmpClient::~QmpClient() {
  if (impl_) {
    error_code ignored;
    impl_->sock.close(ignored);
  }
}

std::unique_ptr<QmpClient> QmpClient::Connect(const std::string& socket_path, std::chrono::milliseconds timeout,
                                              bool wait_for_server) {
  const auto deadline = DeadlineAfter(timeout);
  auto impl = std::make_unique<Impl>();
  impl->path = socket_path;

  Local::endpoint endpoint;
  try {
    endpoint = Local::endpoint(socket_path);
  } catch (const boost::system::system_error& e) {
    throw QmpError("QMP socket path " + socket_path + " is unusable: " + e.code().message());
  }

  auto backoff = std::chrono::milliseconds(2);
  error_code last;
  for (;;) {
    bool done = false;
    error_code err;
    impl->sock.async_connect(endpoint, [&](const error_code& ec) {
      err = ec;
      done = true;
    });
    impl->Run(done, deadline);
    if (!err) break;
    error_code ignored;
    impl->sock.close(ignored);
    if (err != asio::error::operation_aborted) last = err;
    // Not there yet (ENOENT), not listening yet or a stale socket file (ECONNREFUSED), or a
    // full backlog (EAGAIN): QEMU may still be starting, so retry. Anything else is final.
    const bool gone = err.value() == ENOENT || err.value() == ECONNREFUSED;
    if (gone && !wait_for_server)
      throw QmpClosed("QMP socket " + socket_path + " has no server any more (" + err.message() + ")");
    bool retry = err == asio::error::operation_aborted || gone || err.value() == EAGAIN;
    if (!retry) throw QmpError("cannot connect to QMP socket " + socket_path + ": " + err.message());
    auto now = Clock::now();
    if (now >= deadline) {
      throw QmpTimeout("no QMP server at " + socket_path + " after " + std::to_string(timeout.count()) + " ms" +
                       (last ? " (" + last.message() + ")" : std::string()));
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(50));
  }

  // QEMU may write an event ahead of the greeting: a monitor whose previous client had negotiated
  // capabilities still gets events until the new connection's OPENED is handled (seen under a
  // VNC client connecting every few ms: VNC_CONNECTED before the greeting). They are not ours.
  json greeting = impl->ReadMessage(deadline, "greeting");
  while (greeting.is_object() && greeting.contains("event") && !greeting.contains("QMP"))
    greeting = impl->ReadMessage(deadline, "greeting");
  if (!greeting.is_object() || !greeting.contains("QMP")) {
    throw QmpError("unexpected QMP greeting from " + socket_path + ": " + greeting.dump());
  }
  std::unique_ptr<QmpClient> client(new QmpClient(std::move(impl)));
  client->greeting_ = std::move(greeting);
  return client;
}

json QmpClient::Execute(const std::string& command, const json& args, std::chrono::milliseconds timeout) {
  return Run(command, args, -1, timeout);
}

json QmpClient::ExecuteOverlapped(const std::string& command, const json& args, std::chrono::milliseconds timeout,
                                  const std::function<void()>& meanwhile) {
  return Run(command, args, -1, timeout, &meanwhile);
}

json QmpClient::ExecuteWithFd(const std::string& command, const json& args, int fd, std::chrono::milliseconds timeout) {
  if (fd < 0) throw QmpError("QMP '" + command + "': no fd to pass");
  return Run(command, args, fd, timeout);
}

json QmpClient::Run(const std::string& command, const json& args, int fd, std::chrono::milliseconds timeout,
                    const std::function<void()>* meanwhile) {
  const auto deadline = DeadlineAfter(timeout);
  // Every command carries its own id so a late reply to an earlier, timed-out command is
  // never taken for this one's.
  const std::string id = "qlaunch-" + std::to_string(impl_->next_id++);
  json msg = {{"execute", command}, {"id", id}};
  if (!args.is_null()) msg["arguments"] = args;
  const std::string what = "'" + command + "'";
  if (fd < 0) {
    impl_->Write(msg.dump() + "\n", deadline, what);
  } else {
    impl_->ThrowIfClosed(what);
    if (int err = SendWithFd(impl_->sock.native_handle(), msg.dump() + "\n", fd, deadline); err != 0) {
      impl_->closed = true;
      if (err == ETIMEDOUT) throw QmpTimeout("QMP " + what + ": timed out sending to " + impl_->path);
      if (err == EPIPE || err == ECONNRESET) throw QmpClosed("QMP " + what + ": " + impl_->path + " closed the connection");
      throw QmpError("QMP " + what + ": sending an fd to " + impl_->path + ": " + std::strerror(err));
    }
  }
  if (meanwhile) (*meanwhile)();
  for (;;) {
    json reply = impl_->ReadMessage(deadline, what);
    if (!reply.is_object()) continue;
    if (reply.contains("event")) {
      impl_->events.push_back(std::move(reply));
      continue;
    }
    // QEMU echoes "id"; a reply without one only comes for input it could not parse (ours).
    if (reply.contains("id") && reply["id"] != id) continue;
    if (reply.contains("return")) return std::move(reply["return"]);
    if (reply.contains("error")) {
      const json& e = reply["error"];
      std::string desc = e.is_object() && e.contains("desc") && e["desc"].is_string() ? e["desc"].get<std::string>()
                                                                                       : e.dump();
      throw QmpError(desc);
    }
  }
}

json QmpClient::WaitEvent(const std::string& name, std::chrono::milliseconds timeout) {
  const auto deadline = DeadlineAfter(timeout);
  auto& q = impl_->events;
  auto it = std::find_if(q.begin(), q.end(), [&](const json& e) { return e.value("event", "") == name; });
  if (it != q.end()) {
    json e = std::move(*it);
    q.erase(it);
    return e;
  }
  for (;;) {
    json msg = impl_->ReadMessage(deadline, "event " + name);
    if (!msg.is_object() || !msg.contains("event")) continue;  // a stray reply: nobody waits for it
    if (msg.value("event", "") == name) return msg;
    q.push_back(std::move(msg));
  }
}

std::optional<json> QmpClient::NextEvent(std::chrono::milliseconds timeout) {
  auto& q = impl_->events;
  if (!q.empty()) {
    json e = std::move(q.front());
    q.pop_front();
    return e;
  }
  const auto deadline = DeadlineAfter(timeout);
  for (;;) {
    json msg;
    try {
      msg = impl_->ReadMessage(deadline, "event");
    } catch (const QmpClosed&) {
      throw;
    } catch (const QmpTimeout&) {
      return std::nullopt;
    }
    if (msg.is_object() && msg.contains("event")) return msg;
  }
}

std::vector<json> QmpClient::TakeEvents() {
  // Pick up whatever has already arrived, without waiting.
  try {
    for (;;) {
      json msg = impl_->ReadMessage(Clock::now(), "events");
      if (msg.is_object() && msg.contains("event")) impl_->events.push_back(std::move(msg));
    }
  } catch (const QmpTimeout&) {
  }
  std::vector<json> out(std::make_move_iterator(impl_->events.begin()), std::make_move_iterator(impl_->events.end()));
  impl_->events.clear();
  return out;
}

}  // namespace qlaunch::qemu
