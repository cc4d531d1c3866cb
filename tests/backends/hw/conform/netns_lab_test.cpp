// The network-namespace lab built for real with iproute2: where this host (or container) permits
// namespaces and we are root, two namespaces joined by two veth rails carry TCP, and a rail's
// link taken down from inside one side stops carrying while the other rail still does. Anything
// that enters a namespace or changes credentials runs in a forked child (alarm(20), leaves with
// _exit), so the test process itself never moves and never runs the lab's destructor twice.
#include "backends/hw/conform/netns_lab.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <vector>

#include "netns_lab_fixture.hpp"

using namespace railcheck;
using namespace railcheck::test;

namespace {

bool netns_listed(const std::string& name) {
  auto out = conform::run_ip({"netns", "list"});
  if (!out) FAIL(out.error().message());
  std::istringstream lines(out.value());  // "<name>" or "<name> (id: N)" per line
  std::string line;
  while (std::getline(lines, line)) {
    if (line.substr(0, line.find(' ')) == name) return true;
  }
  return false;
}

int connect_within(const std::string& address, uint16_t port, int timeout_ms) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  inet_pton(AF_INET, address.c_str(), &to.sin_addr);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  int so_error = -1;
  socklen_t len = sizeof(so_error);
  if (poll(&p, 1, timeout_ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0 || so_error != 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, 0);
  timeval wait{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  return fd;
}

bool echoes_over(const std::string& address, uint16_t port, const std::string& text) {
  const int fd = connect_within(address, port, 2000);
  if (fd < 0) return false;
  std::string back;
  if (write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size())) {
    char chunk[64];
    ssize_t n = 0;
    while (back.size() < text.size() && (n = read(fd, chunk, sizeof(chunk))) > 0) back.append(chunk, n);
  }
  close(fd);
  return back == text;
}

// Side b: a listener on each rail's b address; serves rail 0 once, then rail 1 twice (before
// and after side a takes rail 0 down), echoing what it reads.
int serve_side_b(const conform::NetnsSide& b, int ports_fd) {
  if (auto in = conform::enter_netns(b.netns); !in) return fail_with(10, in.error().message());
  int listeners[2];
  uint16_t ports[2];
  for (int r = 0; r < 2; ++r) {
    listeners[r] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    inet_pton(AF_INET, b.rails[r].address.c_str(), &at.sin_addr);
    socklen_t len = sizeof(at);
    if (bind(listeners[r], reinterpret_cast<const sockaddr*>(&at), sizeof(at)) != 0 || listen(listeners[r], 4) != 0 ||
        getsockname(listeners[r], reinterpret_cast<sockaddr*>(&at), &len) != 0) {
      return fail_with(11, "listening on " + b.rails[r].address + ": " + std::strerror(errno));
    }
    ports[r] = ntohs(at.sin_port);
  }
  if (write(ports_fd, ports, sizeof(ports)) != sizeof(ports)) return fail_with(12, "writing the ports");
  for (const int r : {0, 1, 1}) {
    const int conn = accept4(listeners[r], nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return fail_with(13, std::string("accept: ") + std::strerror(errno));
    char chunk[64];
    const ssize_t n = read(conn, chunk, sizeof(chunk));
    if (n <= 0 || write(conn, chunk, n) != n) return fail_with(14, "echo on rail " + std::to_string(r));
    close(conn);
  }
  return 0;
}

int probe_side_a(const conform::NetnsSide& a, const conform::NetnsSide& b, const uint16_t ports[2]) {
  if (auto in = conform::enter_netns(a.netns); !in) return fail_with(20, in.error().message());
  for (int r = 0; r < 2; ++r) {
    if (!echoes_over(b.rails[r].address, ports[r], "rail " + std::to_string(r))) {
      return fail_with(21 + r, "no echo over rail " + std::to_string(r) + " to " + b.rails[r].address);
    }
  }
  if (auto down = conform::set_link_up(a.rails[0].if_name, false); !down) return fail_with(23, down.error().message());
  if (const int fd = connect_within(b.rails[0].address, ports[0], 300); fd >= 0) {
    close(fd);
    return fail_with(24, "connected over rail 0 after its link went down");
  }
  if (!echoes_over(b.rails[1].address, ports[1], "rail 1 again")) return fail_with(25, "rail 1 stopped carrying");
  return 0;
}

}  // namespace

TEST_CASE("netns lab: creating one without root fails and says root is needed", "[netns]") {
  const auto check = [] {
    auto lab = conform::NetnsLab::create(test_prefix());
    if (lab) return fail_with(1, "a lab was created without root");
    const std::string m = lab.error().message();
    if (m.find("needs root") == std::string::npos || m.find("endpoint-cut failover") == std::string::npos) {
      return fail_with(2, "unexpected message: " + m);
    }
    return 0;
  };
  if (geteuid() != 0) {
    CHECK(check() == 0);
    return;
  }
  // As root: drop to nobody in a child, so the check runs on every machine.
  CHECK(run_in_child([&] {
          if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) return 3;
          return check();
        }) == 0);
}

TEST_CASE("netns lab: without an ip binary the error says to install iproute2", "[netns]") {
  if (geteuid() != 0) {
    WARN("not root: create() stops at the root check before looking for ip");
    return;
  }
  CHECK(run_in_child([] {
          setenv("PATH", "/nonexistent", 1);
          auto lab = conform::NetnsLab::create(test_prefix());
          if (lab) return fail_with(1, "a lab was created without ip");
          const std::string m = lab.error().message();
          if (m.find("no `ip` binary") == std::string::npos ||
              m.find("apt-get install iproute2") == std::string::npos) {
            return fail_with(2, "unexpected message: " + m);
          }
          return 0;
        }) == 0);
}

TEST_CASE("netns lab: a prefix that would overflow an interface name is refused", "[netns]") {
  auto lab = conform::NetnsLab::create("rc1234567890x");
  REQUIRE_FALSE(lab.ok());
  CHECK_THAT(lab.error().message(), Catch::Contains("not 1 to 12 letters and digits"));
  CHECK_FALSE(conform::NetnsLab::create("rc-1").ok());
}

TEST_CASE("netns lab: both namespaces are listed while the lab lives and neither after", "[netns]") {
  auto lab = lab_or_skip();
  if (!lab) return;
  const conform::NetnsSide a = lab->side(0);
  const conform::NetnsSide b = lab->side(1);
  const std::string prefix = a.netns.substr(0, a.netns.size() - 1);
  CHECK(b.netns == prefix + "b");
  CHECK(a.rails[1].if_name == prefix + "r1a");
  CHECK(b.rails[0].address == "169.254.1.2");
  CHECK(netns_listed(a.netns));
  CHECK(netns_listed(b.netns));
  auto addr = conform::run_ip({"-n", b.netns, "-o", "-4", "addr", "show", "dev", b.rails[1].if_name});
  REQUIRE(addr.ok());
  CHECK_THAT(addr.value(), Catch::Contains("169.254.2.2/30"));

  lab.reset();
  CHECK_FALSE(netns_listed(a.netns));
  CHECK_FALSE(netns_listed(b.netns));
  auto links = conform::run_ip({"-o", "link", "show"});
  REQUIRE(links.ok());
  CHECK_THAT(links.value(), !Catch::Contains(prefix + "r"));
}

TEST_CASE("netns lab: TCP crosses both rails, and a rail taken down stops carrying while the other still does",
          "[netns]") {
  auto lab = lab_or_skip();
  if (!lab) return;
  int ports_pipe[2];
  REQUIRE(pipe2(ports_pipe, O_CLOEXEC) == 0);
  const pid_t b = fork_child([&] {
    close(ports_pipe[0]);
    return serve_side_b(lab->side(1), ports_pipe[1]);
  });
  close(ports_pipe[1]);
  uint16_t ports[2] = {0, 0};
  pollfd p{ports_pipe[0], POLLIN, 0};
  const bool listening = poll(&p, 1, 5000) == 1 && read(ports_pipe[0], ports, sizeof(ports)) == sizeof(ports);
  close(ports_pipe[0]);
  const int a_code = listening ? run_in_child([&] { return probe_side_a(lab->side(0), lab->side(1), ports); }) : -1;
  if (a_code != 0) kill(b, SIGKILL);  // it would wait for connections that are not coming
  const int b_code = wait_child(b);
  INFO("side a exit " << a_code << ", side b exit " << b_code << " (codes: fail_with calls in this file)");
  REQUIRE(listening);
  CHECK(a_code == 0);
  if (a_code == 0) CHECK(b_code == 0);
}

TEST_CASE("netns lab: a namespace name already taken fails with ip's words and leaves that namespace alone",
          "[netns]") {
  auto first = lab_or_skip();
  if (!first) return;
  const std::string prefix = first->side(0).netns.substr(0, first->side(0).netns.size() - 1);
  auto second = conform::NetnsLab::create(prefix);
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.error().message(),
             Catch::Contains("`ip netns add " + prefix + "a` failed") && Catch::Contains("exists"));
  CHECK(netns_listed(prefix + "a"));
  CHECK(netns_listed(prefix + "b"));
}

TEST_CASE("netns lab: a step failing half way removes the namespaces and the veth pair already built", "[netns]") {
  if (!namespaces_usable()) return;
  const std::string prefix = test_prefix();
  // In a child with a network namespace of its own (the lab's veths are created there), a veth
  // pair (this kernel has no dummy driver) takes rail 1's side-b name, so creation fails after
  // rail 0 is fully built.
  CHECK(run_in_child([&] {
          if (unshare(CLONE_NEWNET) != 0) return fail_with(1, std::string("unshare: ") + std::strerror(errno));
          auto blocker = conform::run_ip({"link", "add", prefix + "r1b", "type", "veth", "peer", "name", prefix + "x"});
          if (!blocker) return fail_with(2, blocker.error().message());
          auto lab = conform::NetnsLab::create(prefix);
          if (lab) return fail_with(3, "created despite the clash");
          if (lab.error().message().find("ip link add " + prefix + "r1a type veth") == std::string::npos) {
            return fail_with(4, "unexpected message: " + lab.error().message());
          }
          if (netns_listed(prefix + "a") || netns_listed(prefix + "b")) return fail_with(5, "namespace left behind");
          auto links = conform::run_ip({"-o", "link", "show"});
          if (!links || links.value().find(prefix + "r0") != std::string::npos ||
              links.value().find(prefix + "r1b") == std::string::npos) {
            return fail_with(6, "links after the failure: " + (links ? links.value() : links.error().message()));
          }
          return 0;
        }) == 0);
  CHECK_FALSE(netns_listed(prefix + "a"));
}

TEST_CASE("netns lab: setting a link that does not exist fails and names it", "[netns]") {
  auto r = conform::set_link_up("rcnosuchlink0", false);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message(), Catch::Contains("'rcnosuchlink0'") && Catch::Contains("No such device"));
}

namespace {

// Side b of the shaped-rail case: accepts once on rail 0, reads to EOF, answers with the byte count.
int count_side_b(const conform::NetnsSide& b, int port_fd) {
  if (auto in = conform::enter_netns(b.netns); !in) return fail_with(30, in.error().message());
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  inet_pton(AF_INET, b.rails[0].address.c_str(), &at.sin_addr);
  socklen_t len = sizeof(at);
  if (bind(listener, reinterpret_cast<const sockaddr*>(&at), sizeof(at)) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len) != 0)
    return fail_with(31, std::string("listening: ") + std::strerror(errno));
  const uint16_t port = ntohs(at.sin_port);
  if (write(port_fd, &port, sizeof(port)) != sizeof(port)) return fail_with(32, "writing the port");
  const int conn = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn < 0) return fail_with(33, std::string("accept: ") + std::strerror(errno));
  std::uint64_t got = 0;
  char chunk[65536];
  for (ssize_t n = 0; (n = read(conn, chunk, sizeof(chunk))) > 0;) got += static_cast<std::uint64_t>(n);
  if (write(conn, &got, sizeof(got)) != sizeof(got)) return fail_with(34, "answering the count");
  close(conn);
  return 0;
}

// Side a: `bytes` over rail 0 as fast as TCP takes them, timed from the first write to side b's
// count; reports the payload rate on `report_fd`, exit 0 when side b counted every byte.
int timed_side_a(const conform::NetnsSide& a, const conform::NetnsSide& b, uint16_t port, std::uint64_t bytes,
                 int report_fd) {
  if (auto in = conform::enter_netns(a.netns); !in) return fail_with(40, in.error().message());
  const int fd = connect_within(b.rails[0].address, port, 2000);
  if (fd < 0) return fail_with(41, "no connection over rail 0");
  timeval wait{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  std::vector<char> block(65536, 'x');
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t sent = 0; sent < bytes;) {
    const auto n = write(fd, block.data(), std::min<std::uint64_t>(block.size(), bytes - sent));
    if (n <= 0) return fail_with(42, std::string("send: ") + std::strerror(errno));
    sent += static_cast<std::uint64_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::uint64_t counted = 0;
  if (read(fd, &counted, sizeof(counted)) != sizeof(counted)) return fail_with(43, "no count from side b");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  close(fd);
  const double rate = static_cast<double>(bytes) * 8 / secs / 1e9;
  if (write(report_fd, &rate, sizeof(rate)) != sizeof(rate)) return fail_with(44, "reporting the rate");
  if (counted != bytes) return fail_with(45, "side b counted " + std::to_string(counted));
  return 0;
}

}  // namespace

TEST_CASE("netns lab: a rail shaped to a rate carries no faster than it, every byte, and bad rates are refused",
          "[netns]") {
  auto lab = lab_or_skip();
  if (!lab) return;
  CHECK(lab->rate_limit_gbps() == 0);
  for (const double bad : {0.0, -1.0, 0.0004, 401.0}) {  // 0.0004: under tc's kbit/s resolution
    auto refused = lab->limit_rate(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message(), Catch::Contains("Gb/s"));
  }
  constexpr double kGbps = 0.2;
  auto shaped = lab->limit_rate(kGbps);
  REQUIRE(shaped.ok());
  CHECK(lab->rate_limit_gbps() == kGbps);
  for (int s = 0; s < 2; ++s) {
    for (const auto& rail : lab->side(s).rails) {
      auto shown = conform::run_tc({"-n", lab->side(s).netns, "qdisc", "show", "dev", rail.if_name});
      REQUIRE(shown.ok());
      CHECK_THAT(shown.value(), Catch::Contains("tbf") && Catch::Contains("rate 200Mbit"));
    }
  }
  // 5 MB at 0.2 Gb/s is 0.2 s; unshaped, a veth pair moves it in a few ms. TCP/IP headers and the
  // one bucket's burst (16 KiB) make the payload slower than the rate, never faster.
  constexpr std::uint64_t kBytes = 5'000'000;
  int port_pipe[2], rate_pipe[2];
  REQUIRE(pipe2(port_pipe, O_CLOEXEC) == 0);
  REQUIRE(pipe2(rate_pipe, O_CLOEXEC) == 0);
  const pid_t b = fork_child([&] {
    close(port_pipe[0]);
    return count_side_b(lab->side(1), port_pipe[1]);
  });
  close(port_pipe[1]);
  uint16_t port = 0;
  pollfd p{port_pipe[0], POLLIN, 0};
  const bool listening = poll(&p, 1, 5000) == 1 && read(port_pipe[0], &port, sizeof(port)) == sizeof(port);
  close(port_pipe[0]);
  const int a_code = listening ? run_in_child([&] {
    close(rate_pipe[0]);
    return timed_side_a(lab->side(0), lab->side(1), port, kBytes, rate_pipe[1]);
  })
                               : -1;
  close(rate_pipe[1]);
  double rate = 0;
  const bool reported = read(rate_pipe[0], &rate, sizeof(rate)) == sizeof(rate);
  close(rate_pipe[0]);
  if (a_code != 0) kill(b, SIGKILL);
  const int b_code = wait_child(b);
  INFO("side a exit " << a_code << ", side b exit " << b_code << ", payload " << rate << " Gb/s");
  REQUIRE(listening);
  REQUIRE(a_code == 0);
  CHECK(b_code == 0);
  REQUIRE(reported);
  CHECK(rate <= kGbps);
  CHECK(rate > kGbps / 4);  // and it does carry: a quarter of the rate even on a loaded runner
}
