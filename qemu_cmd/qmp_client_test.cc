#include "qemu_cmd/qmp_client.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <boost/process.hpp>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace qlaunch::qemu {
namespace {

using qlaunch::testing::TempDir;

namespace fs = std::filesystem;
namespace bp = boost::process;
namespace asio = boost::asio;
using Local = asio::local::stream_protocol;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kQemu = "/usr/bin/qemu-system-x86_64";

// A real QEMU 7.2 with nothing to run: -machine none, paused, QMP on a socket in a temp dir.
class RealQemuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kQemu, X_OK) != 0) GTEST_SKIP() << kQemu << " is not installed (apt-get install qemu-system-x86)";
    sock_ = (dir_.path / "qmp.sock").string();
    qemu_ = bp::child(kQemu, "-machine", "none", "-S", "-nodefaults", "-no-user-config", "-display", "none", "-qmp",
                      "unix:" + sock_ + ",server=on,wait=off", bp::std_in < bp::null,
                      (bp::std_out & bp::std_err) > (dir_.path / "qemu.log").string());
    qmp_ = QmpClient::Connect(sock_, 20s);
  }
  void TearDown() override {
    qmp_.reset();
    std::error_code ec;
    if (qemu_.valid() && qemu_.running(ec)) {
      ::kill(qemu_.id(), SIGKILL);  // then a blocking wait: no zombie left behind
      qemu_.wait(ec);
    }
  }

  TempDir dir_;
  std::string sock_;
  bp::child qemu_;
  std::unique_ptr<QmpClient> qmp_;
};

TEST_F(RealQemuTest, GreetingCarriesVersion) {
  const json& g = qmp_->Greeting();
  ASSERT_TRUE(g.contains("QMP")) << g.dump();
  const json& v = g["QMP"]["version"]["qemu"];
  EXPECT_TRUE(v["major"].is_number_integer()) << g.dump();
  EXPECT_GE(v["major"].get<int>(), 2);
  EXPECT_TRUE(g["QMP"]["capabilities"].is_array()) << g.dump();
}

TEST_F(RealQemuTest, QueryStatusIsPrelaunch) {
  EXPECT_EQ(qmp_->Execute("qmp_capabilities"), json::object());
  json status = qmp_->Execute("query-status");
  EXPECT_EQ(status.value("status", ""), "prelaunch") << status.dump();
  EXPECT_EQ(status.value("running", true), false) << status.dump();
}

// An fd passed with getfd reaches QEMU under its name: a pipe's read end becomes a chardev QEMU
// reads from, so its data is what we wrote; getfd without an fd is QEMU's error.
TEST_F(RealQemuTest, ExecuteWithFdHandsQemuTheFd) {
  qmp_->Execute("qmp_capabilities");
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  EXPECT_EQ(qmp_->ExecuteWithFd("getfd", {{"fdname", "f1"}}, p[1]), json::object());
  ::close(p[1]);
  // QEMU holds the write end now: closing it there (closefd) is what ends our read with EOF.
  EXPECT_EQ(qmp_->Execute("closefd", {{"fdname", "f1"}}), json::object());
  char c;
  EXPECT_EQ(::read(p[0], &c, 1), 0) << "QEMU did not hold (and close) the fd";
  ::close(p[0]);
  EXPECT_THROW(qmp_->Execute("getfd", {{"fdname", "f2"}}), QmpError);
  EXPECT_THROW(qmp_->ExecuteWithFd("getfd", {{"fdname", "f3"}}, -1), QmpError);
}

TEST_F(RealQemuTest, UnknownCommandThrowsQemuDescription) {
  qmp_->Execute("qmp_capabilities");
  try {
    qmp_->Execute("qlaunch-no-such-command");
    FAIL() << "no exception";
  } catch (const QmpTimeout& e) {
    FAIL() << "timeout instead of QEMU's error: " << e.what();
  } catch (const QmpError& e) {
    EXPECT_STREQ(e.what(), "The command qlaunch-no-such-command has not been found");
  }
  // The connection is still good afterwards.
  EXPECT_EQ(qmp_->Execute("query-status").value("status", ""), "prelaunch");
}

TEST_F(RealQemuTest, BadArgumentThrowsQemuDescription) {
  qmp_->Execute("qmp_capabilities");
  try {
    qmp_->Execute("query-command-line-options", {{"option", "qlaunch-nosuch"}});
    FAIL() << "no exception";
  } catch (const QmpTimeout& e) {
    FAIL() << "timeout instead of QEMU's error: " << e.what();
  } catch (const QmpError& e) {
    EXPECT_NE(std::string(e.what()).find("qlaunch-nosuch"), std::string::npos) << e.what();
  }
}

TEST_F(RealQemuTest, EventsAreQueuedAndAwaited) {
  qmp_->Execute("qmp_capabilities");
  qmp_->Execute("cont");
  json resume = qmp_->WaitEvent("RESUME", 10s);
  EXPECT_EQ(resume.value("event", ""), "RESUME");
  EXPECT_TRUE(resume.contains("timestamp")) << resume.dump();
  // QEMU sends STOP before the reply to "stop": Execute queues it and WaitEvent finds it there.
  qmp_->Execute("stop");
  EXPECT_EQ(qmp_->WaitEvent("STOP", 10s).value("event", ""), "STOP");
  EXPECT_EQ(qmp_->Execute("query-status").value("status", ""), "paused");
}

// ExecuteOverlapped runs its work once, after the command went out and before its reply is read:
// QEMU has resumed by the time the work looks, and the reply is still this command's. RESUME is
// queued by the time cont's reply is back, without waiting (what `start` relies on to skip
// query-status).
TEST_F(RealQemuTest, OverlappedWorkRunsOnceBetweenSendAndReply) {
  qmp_->Execute("qmp_capabilities");
  int calls = 0;
  EXPECT_EQ(qmp_->ExecuteOverlapped("cont", nullptr, 10s, [&] { ++calls; }), json::object());
  EXPECT_EQ(calls, 1);
  std::optional<json> ev = qmp_->NextEvent(0ms);
  ASSERT_TRUE(ev.has_value()) << "no event queued with cont's reply";
  EXPECT_EQ(ev->value("event", ""), "RESUME") << ev->dump();
  // The work's own failure reaches the caller; the connection stays good.
  EXPECT_THROW(qmp_->ExecuteOverlapped("stop", nullptr, 10s, [] { throw std::runtime_error("meanwhile"); }),
               std::runtime_error);
  EXPECT_EQ(qmp_->Execute("query-status").value("status", ""), "paused");
}

TEST_F(RealQemuTest, QuitThenClosedConnectionIsTimeout) {
  qmp_->Execute("qmp_capabilities");
  EXPECT_EQ(qmp_->Execute("quit"), json::object());
  EXPECT_THROW(qmp_->Execute("query-status", nullptr, 10s), QmpTimeout);
  EXPECT_THROW(qmp_->Execute("query-status", nullptr, 10s), QmpTimeout);  // stays closed
  qemu_.wait();
}

// A scripted QMP peer on a UNIX socket: accepts one client, greets it, then runs `script`.
class FakeQmpServer {
 public:
  using Script = std::function<void(Local::socket&, asio::streambuf&)>;
  FakeQmpServer(const std::string& path, Script script, bool greet = true) : acceptor_(io_, Local::endpoint(path)) {
    thread_ = std::thread([this, script, greet] {
      Local::socket sock(io_);
      acceptor_.accept(sock);
      if (greet) WriteLine(sock, R"({"QMP": {"version": {"qemu": {"micro": 0, "minor": 0, "major": 9}}, "capabilities": []}})");
      asio::streambuf buf;
      script(sock, buf);
    });
  }
  ~FakeQmpServer() { thread_.join(); }

  static void WriteLine(Local::socket& s, const std::string& line) { asio::write(s, asio::buffer(line + "\r\n")); }
  static std::optional<json> ReadCommand(Local::socket& s, asio::streambuf& buf) {
    boost::system::error_code ec;
    size_t n = asio::read_until(s, buf, '\n', ec);
    if (ec) return std::nullopt;
    std::string line(static_cast<const char*>(buf.data().data()), n);
    buf.consume(n);
    return json::parse(line);
  }
  // Reads until the client goes away.
  static void DrainUntilClosed(Local::socket& s, asio::streambuf& buf) {
    while (ReadCommand(s, buf)) {
    }
  }

 private:
  asio::io_context io_;
  Local::acceptor acceptor_;
  std::thread thread_;
};

TEST(QmpClientFake, SilentPeerTimesOut) {
  TempDir dir;
  std::string path = (dir.path / "silent.sock").string();
  FakeQmpServer server(path, FakeQmpServer::DrainUntilClosed);
  auto qmp = QmpClient::Connect(path, 10s);
  EXPECT_EQ(qmp->Greeting()["QMP"]["version"]["qemu"]["major"], 9);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(qmp->Execute("query-status", nullptr, 200ms), QmpTimeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  EXPECT_THROW(qmp->WaitEvent("SHUTDOWN", 100ms), QmpTimeout);
  EXPECT_TRUE(qmp->TakeEvents().empty());
}

TEST(QmpClientFake, PeerClosingIsTimeout) {
  TempDir dir;
  std::string path = (dir.path / "closing.sock").string();
  FakeQmpServer server(path, [](Local::socket& s, asio::streambuf& buf) {
    FakeQmpServer::ReadCommand(s, buf);
    s.close();
  });
  auto qmp = QmpClient::Connect(path, 10s);
  try {
    qmp->Execute("query-status", nullptr, 10s);
    FAIL() << "no exception";
  } catch (const QmpTimeout& e) {
    EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
  }
}

TEST(QmpClientFake, RepliesMatchedByIdAndEventsQueued) {
  TempDir dir;
  std::string path = (dir.path / "ids.sock").string();
  FakeQmpServer server(path, [](Local::socket& s, asio::streambuf& buf) {
    auto cmd = FakeQmpServer::ReadCommand(s, buf);
    ASSERT_TRUE(cmd);
    json id = (*cmd)["id"];
    json echo = {{"execute", (*cmd)["execute"]}, {"arguments", cmd->value("arguments", json())}};
    FakeQmpServer::WriteLine(s, R"({"event": "FIRST", "timestamp": {"seconds": 1, "microseconds": 2}})");
    FakeQmpServer::WriteLine(s, json{{"return", "stale"}, {"id", "someone-else"}}.dump());
    // The real reply, split across two writes in the middle of the line.
    std::string reply = json{{"return", echo}, {"id", id}}.dump() + "\r\n";
    asio::write(s, asio::buffer(reply.substr(0, 7)));
    std::this_thread::sleep_for(50ms);
    asio::write(s, asio::buffer(reply.substr(7)));
    FakeQmpServer::WriteLine(s, R"({"event": "SECOND", "timestamp": {"seconds": 3, "microseconds": 4}})");
    FakeQmpServer::DrainUntilClosed(s, buf);
  });
  auto qmp = QmpClient::Connect(path, 10s);
  json ret = qmp->Execute("frob", {{"x", 1}}, 10s);
  EXPECT_EQ(ret, (json{{"execute", "frob"}, {"arguments", {{"x", 1}}}}));
  EXPECT_EQ(qmp->WaitEvent("SECOND", 10s).value("event", ""), "SECOND");
  auto events = qmp->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].value("event", ""), "FIRST");
  EXPECT_TRUE(qmp->TakeEvents().empty());
}

TEST(QmpClientFake, ErrorWithoutIdIsStillThisCommandsError) {
  TempDir dir;
  std::string path = (dir.path / "err.sock").string();
  FakeQmpServer server(path, [](Local::socket& s, asio::streambuf& buf) {
    FakeQmpServer::ReadCommand(s, buf);
    FakeQmpServer::WriteLine(s, R"({"error": {"class": "GenericError", "desc": "JSON parse error, whatever"}})");
    FakeQmpServer::DrainUntilClosed(s, buf);
  });
  auto qmp = QmpClient::Connect(path, 10s);
  try {
    qmp->Execute("anything", nullptr, 10s);
    FAIL() << "no exception";
  } catch (const QmpTimeout& e) {
    FAIL() << e.what();
  } catch (const QmpError& e) {
    EXPECT_STREQ(e.what(), "JSON parse error, whatever");
  }
}

TEST(QmpClientConnect, PathThatNeverAppearsTimesOut) {
  TempDir dir;
  std::string path = (dir.path / "never.sock").string();
  auto start = std::chrono::steady_clock::now();
  try {
    QmpClient::Connect(path, 300ms);
    FAIL() << "connected to nothing";
  } catch (const QmpTimeout& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
}

TEST(QmpClientConnect, PeerThatNeverGreetsTimesOut) {
  TempDir dir;
  std::string path = (dir.path / "mute.sock").string();
  FakeQmpServer server(path, FakeQmpServer::DrainUntilClosed, /*greet=*/false);
  EXPECT_THROW(QmpClient::Connect(path, 300ms), QmpTimeout);
}

// An event written before the greeting (the previous client's monitor state) is skipped; the
// greeting is still the greeting, and the event is not queued as this client's.
TEST(QmpClientConnect, AnEventAheadOfTheGreetingIsSkipped) {
  TempDir dir;
  std::string path = (dir.path / "early.sock").string();
  FakeQmpServer server(
      path,
      [](Local::socket& s, asio::streambuf& buf) {
        // One write: the client may have given up by a second one.
        FakeQmpServer::WriteLine(s, R"({"timestamp": {"seconds": 1, "microseconds": 2}, "event": "VNC_CONNECTED", "data": {}})"
                                    "\r\n"
                                    R"({"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}}, "capabilities": []}})");
        FakeQmpServer::DrainUntilClosed(s, buf);
      },
      /*greet=*/false);
  auto qmp = QmpClient::Connect(path, 10s);
  EXPECT_EQ(qmp->Greeting()["QMP"]["version"]["qemu"]["major"], 7);
  EXPECT_TRUE(qmp->TakeEvents().empty());
  qmp.reset();
}

// Anything else ahead of the greeting is still no QMP server.
TEST(QmpClientConnect, AReplyInsteadOfAGreetingIsAnError) {
  TempDir dir;
  std::string path = (dir.path / "odd.sock").string();
  FakeQmpServer server(
      path,
      [](Local::socket& s, asio::streambuf& buf) {
        FakeQmpServer::WriteLine(s, R"({"return": {}})");
        FakeQmpServer::DrainUntilClosed(s, buf);
      },
      /*greet=*/false);
  EXPECT_THROW(QmpClient::Connect(path, 10s), QmpError);
}

TEST(QmpClientConnect, WaitsForTheSocketToAppear) {
  TempDir dir;
  std::string path = (dir.path / "late.sock").string();
  std::unique_ptr<FakeQmpServer> server;
  std::thread late([&] {
    std::this_thread::sleep_for(300ms);
    server = std::make_unique<FakeQmpServer>(path, FakeQmpServer::DrainUntilClosed);
  });
  std::unique_ptr<QmpClient> qmp;
  EXPECT_NO_THROW(qmp = QmpClient::Connect(path, 20s));
  late.join();
  if (qmp) {
    EXPECT_TRUE(qmp->Greeting().contains("QMP"));
  }
  qmp.reset();  // lets the server thread see EOF before it is joined
  server.reset();
}

TEST(QmpClientConnect, OverlongPathIsAnError) {
  std::string path = "/tmp/" + std::string(200, 'x');
  EXPECT_THROW(
      {
        try {
          QmpClient::Connect(path, 100ms);
        } catch (const QmpTimeout&) {
          FAIL() << "timed out instead of rejecting the path";
        }
      },
      QmpError);
}

}  // namespace
}  // namespace qlaunch::qemu
