#include "launcher/lifecycle/observe/guest_agent.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

namespace qlaunch::launcher {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(GuestAgent, SocketOfTheAgentChannel) {
  const std::string xml = R"(<domain type='qemu'><name>d</name><devices>
    <channel type='unix'><source mode='bind' path='/run/other.sock'/><target type='virtio' name='org.example.0'/></channel>
    <channel type='pty'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
    <channel type='unix'><source mode='bind' path='/run/qga.sock'/><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
  </devices></domain>)";
  EXPECT_EQ(GuestAgentSocket(xml, "d.xml"), "/run/qga.sock");
  EXPECT_EQ(GuestAgentSocket("<domain><devices/></domain>", "d.xml"), "");
}

// A stub agent on a listening UNIX socket: accepts one client and answers what `script` says.
class StubAgent {
 public:
  using Script = std::function<void(int fd)>;
  explicit StubAgent(Script script) {
    path_ = (std::filesystem::temp_directory_path() / ("qga-stub-" + std::to_string(::getpid()) + "-" +
                                                       std::to_string(counter_++) + ".sock"))
                .string();
    listen_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path_.c_str());
    ::unlink(path_.c_str());
    EXPECT_EQ(::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(listen_, 1), 0);
    thread_ = std::thread([this, script] {
      int fd = ::accept(listen_, nullptr, nullptr);
      if (fd < 0) return;
      script(fd);
      ::close(fd);
    });
  }
  ~StubAgent() {
    ::shutdown(listen_, SHUT_RDWR);
    thread_.join();
    ::close(listen_);
    ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }

  // Reads one newline-terminated request (dropping 0xFF bytes) and parses it.
  static json ReadRequest(int fd) {
    std::string line;
    char c;
    while (::read(fd, &c, 1) == 1 && c != '\n')
      if (c != '\xff') line += c;
    return json::parse(line);
  }
  static void Write(int fd, const std::string& s) { ASSERT_EQ(::write(fd, s.data(), s.size()), (ssize_t)s.size()); }

 private:
  static inline int counter_ = 0;
  std::string path_;
  int listen_ = -1;
  std::thread thread_;
};

TEST(GuestAgent, SyncsThenRunsTheCommand) {
  json seen_sync, seen_cmd;
  StubAgent stub([&](int fd) {
    // Stale output of an earlier client first, as a channel can hold it.
    StubAgent::Write(fd, "{\"return\": 7}\n\xff{\"return\": 12345}\n");
    seen_sync = StubAgent::ReadRequest(fd);
    StubAgent::Write(fd, "\xff{\"return\": " + seen_sync["arguments"]["id"].dump() + "}\n");
    seen_cmd = StubAgent::ReadRequest(fd);
    StubAgent::Write(fd, R"({"return": [{"name": "eth0"}]})" "\n");
  });
  const json r = GuestAgentCommand(stub.path(), "guest-network-get-interfaces", 2s, 2s);
  EXPECT_EQ(r, json::parse(R"([{"name":"eth0"}])"));
  EXPECT_EQ(seen_sync["execute"], "guest-sync-delimited");
  EXPECT_TRUE(seen_sync["arguments"]["id"].is_number_integer());
  EXPECT_EQ(seen_cmd, json::parse(R"({"execute":"guest-network-get-interfaces"})"));
}

TEST(GuestAgent, AnAgentThatDoesNotAnswerTimesOut) {
  StubAgent stub([](int fd) {
    StubAgent::ReadRequest(fd);
    std::this_thread::sleep_for(600ms);
  });
  const auto t0 = std::chrono::steady_clock::now();
  try {
    GuestAgentCommand(stub.path(), "guest-network-get-interfaces", 300ms, 300ms);
    FAIL() << "no error";
  } catch (const GuestAgentError& e) {
    EXPECT_NE(std::string(e.what()).find("does not answer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("qemu-guest-agent"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

TEST(GuestAgent, TheAgentsErrorAndGarbage) {
  for (const std::string& reply : {std::string(R"({"error": {"class": "GenericError", "desc": "no ifaddrs"}})"),
                                   std::string("not json")}) {
    StubAgent stub([&](int fd) {
      const json sync = StubAgent::ReadRequest(fd);
      StubAgent::Write(fd, "\xff{\"return\": " + sync["arguments"]["id"].dump() + "}\n");
      StubAgent::ReadRequest(fd);
      StubAgent::Write(fd, reply + "\n");
    });
    try {
      GuestAgentCommand(stub.path(), "guest-network-get-interfaces", 2s, 2s);
      FAIL() << "no error for " << reply;
    } catch (const GuestAgentError& e) {
      EXPECT_NE(std::string(e.what()).find(reply == "not json" ? "not a JSON object" : "no ifaddrs"), std::string::npos)
          << e.what();
    }
  }
}

TEST(GuestAgent, NoSocketIsAClearError) {
  try {
    GuestAgentCommand("/nonexistent/qga.sock", "guest-ping", 1s, 1s);
    FAIL() << "no error";
  } catch (const GuestAgentError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect to the guest agent channel /nonexistent/qga.sock"),
              std::string::npos)
        << e.what();
  }
}

TEST(GuestAgent, ClosedChannelIsAnError) {
  StubAgent stub([](int fd) { StubAgent::ReadRequest(fd); });
  EXPECT_THROW(GuestAgentCommand(stub.path(), "guest-ping", 2s, 2s), GuestAgentError);
}

}  // namespace
}  // namespace qlaunch::launcher
